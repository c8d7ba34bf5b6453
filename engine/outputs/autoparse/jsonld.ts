/**
 * JSON-LD blocks, parsed. Sites wrap them in HTML comments or CDATA markers; those are removed.
 * A block that is still not JSON is skipped: a half-parsed block is worse than none.
 */
import type { HTMLElement } from '../dom';

export function jsonLd(root: HTMLElement): unknown[] {
  const out: unknown[] = [];
  for (const script of root.querySelectorAll('script[type]')) {
    const type = (script.getAttribute('type') ?? '').split(';')[0]?.trim().toLowerCase();
    if (type !== 'application/ld+json') continue;
    const text = withoutClosingMarker(script.rawText.trim().replace(/^(?:<!--|\/\/\s*<!\[CDATA\[|<!\[CDATA\[)\s*/, ''));
    if (!text) continue;
    try {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed)) for (const item of parsed as unknown[]) out.push(item);
      else out.push(parsed);
    } catch {
      // invalid block: skipped
    }
  }
  return out;
}

/**
 * The block without a closing `-->`, `]]>` or `// ]]>` (and the whitespace before it), by hand: the
 * pattern `\s*(?:-->|…)$` rescans a long run of whitespace inside the block from each of its characters.
 */
function withoutClosingMarker(text: string): string {
  if (text.endsWith('-->')) return text.slice(0, -3).trimEnd();
  if (!text.endsWith(']]>')) return text;
  const before = text.slice(0, -3).trimEnd();
  return before.endsWith('//') ? before.slice(0, -2).trimEnd() : before;
}
