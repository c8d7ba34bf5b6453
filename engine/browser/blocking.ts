/**
 * Resource blocking for rendered pages, in the engine's own terms. The interface's parameter names are
 * read outside the engine (core/fetch/browser-params.ts); here: the `block_resources` language and the
 * default.
 *
 * Defaults: `block_resources` unset blocks image, media and font (pages render faster and cheaper and
 * their HTML is the same) — except when a screenshot or PDF is asked for, where nothing is blocked
 * unless asked, so the picture looks like the page. `block_resources=none` (or `false`) blocks nothing.
 */
import { BLOCKABLE_TYPES, type BlockableType, type RenderRequest } from './types';

export const DEFAULT_BLOCKED: readonly BlockableType[] = ['image', 'media', 'font'];

/** `image,font` → the list; `none`/`false` → nothing blocked; unset → `undefined` (the default applies). */
export function parseBlockResources(raw: string | undefined): { ok: true; value?: BlockableType[] } | { ok: false; detail: string } {
  if (raw === undefined || raw.trim() === '') return { ok: true };
  const items = raw
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter((item) => item !== '');
  if (items.length === 1 && (items[0] === 'none' || items[0] === 'false')) return { ok: true, value: [] };
  const unknown = items.find((item) => !(BLOCKABLE_TYPES as readonly string[]).includes(item));
  if (unknown !== undefined) return { ok: false, detail: `unknown resource type "${unknown}" (known: ${BLOCKABLE_TYPES.join(', ')}, or none)` };
  return { ok: true, value: [...new Set(items)] as BlockableType[] };
}

/** What a request blocks: its own list, else the default (nothing for screenshots and PDFs). */
export function blockedTypes(request: Pick<RenderRequest, 'blockResources' | 'screenshot' | 'pdf'>): ReadonlySet<BlockableType> {
  if (request.blockResources) return new Set(request.blockResources);
  return new Set(request.screenshot || request.pdf ? [] : DEFAULT_BLOCKED);
}
