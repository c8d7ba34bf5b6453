/**
 * The browser parameters of Fetch, from query strings to a checked `RenderRequest` part, before any
 * browser is touched. A bad value is an `invalid_parameter` failure naming the parameter (`REQS004`).
 *
 * Defaults: `block_resources` unset blocks image, media and font (pages render faster and cheaper and
 * their HTML is the same) — except when a screenshot or PDF is asked for, where nothing is blocked
 * unless asked, so the picture looks like the page. `block_resources=none` (or `false`) blocks nothing.
 */
import { invalidSelector } from '../outputs/css-extract';
import { parseInstructions } from './instructions';
import { BLOCKABLE_TYPES, type BlockableType, type Device, type RenderError, type RenderRequest, type ScreenshotRequest } from './types';

export const DEFAULT_BLOCKED: readonly BlockableType[] = ['image', 'media', 'font'];

/** Parameters that need `js_render`. */
const BROWSER_ONLY = [
  'js_instructions',
  'wait',
  'wait_for',
  'screenshot',
  'screenshot_fullpage',
  'screenshot_selector',
  'device',
  'window_width',
  'window_height',
] as const;

export type BrowserParams = Partial<Record<(typeof BROWSER_ONLY)[number] | 'block_resources' | 'screenshot_format' | 'screenshot_quality' | 'response_type', string>>;

export type BrowserParamsParse =
  | { ok: true; value: Pick<RenderRequest, 'instructions' | 'wait' | 'waitFor' | 'blockResources' | 'device' | 'windowWidth' | 'windowHeight' | 'screenshot' | 'pdf'> }
  | { ok: false; error: RenderError };

const invalid = (parameter: string, detail: string): BrowserParamsParse => ({
  ok: false,
  error: { kind: 'invalid_parameter', parameter, detail: `${parameter}: ${detail}` },
});

const BOOLEAN: Record<string, boolean> = { true: true, '1': true, false: false, '0': false };

export function parseBrowserParams(params: BrowserParams, jsRender: boolean): BrowserParamsParse {
  const given = (name: keyof BrowserParams): string | undefined => {
    const raw = params[name];
    return raw === undefined || raw === '' ? undefined : raw;
  };
  if (!jsRender) {
    const needy = BROWSER_ONLY.find((name) => given(name) !== undefined && !(name.startsWith('screenshot') && BOOLEAN[given(name)!.toLowerCase()] === false));
    if (needy) return invalid(needy, 'requires js_render=true');
    // Markdown and plain text come from any page; a PDF is printed by the browser.
    if (given('response_type')?.toLowerCase() === 'pdf') return invalid('response_type', 'pdf requires js_render=true');
  }
  const flags: Record<string, boolean> = {};
  for (const name of ['screenshot', 'screenshot_fullpage'] as const) {
    const raw = given(name);
    if (raw === undefined) continue;
    const flag = BOOLEAN[raw.toLowerCase()];
    if (flag === undefined) return invalid(name, `expected true or false, got "${raw}"`);
    flags[name] = flag;
  }
  let instructions: RenderRequest['instructions'];
  const rawInstructions = given('js_instructions');
  if (rawInstructions !== undefined) {
    const parsed = parseInstructions(rawInstructions);
    if (!parsed.ok) return { ok: false, error: { kind: 'invalid_parameter', parameter: 'js_instructions', detail: parsed.error.detail } };
    instructions = parsed.instructions;
  }
  const numbers: Record<string, number | undefined> = {};
  for (const [name, min, max] of [
    ['wait', 0, 30_000],
    ['window_width', 100, 4_096],
    ['window_height', 100, 4_096],
    ['screenshot_quality', 1, 100],
  ] as const) {
    const raw = given(name);
    if (raw === undefined) continue;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) return invalid(name, `expected an integer from ${min} to ${max}, got "${raw}"`);
    numbers[name] = Number(raw);
  }
  // Checked here, before any browser: a selector that does not compile would only fail at the wait.
  const waitFor = given('wait_for');
  if (waitFor !== undefined && invalidSelector(waitFor) !== undefined) return invalid('wait_for', `is not a valid CSS selector: "${waitFor.slice(0, 200)}"`);
  const device = given('device')?.toLowerCase();
  if (device !== undefined && device !== 'desktop' && device !== 'mobile') return invalid('device', `expected desktop or mobile, got "${given('device')}"`);
  const format = given('screenshot_format')?.toLowerCase() ?? 'png';
  if (format !== 'png' && format !== 'jpeg' && format !== 'jpg') return invalid('screenshot_format', `expected png or jpeg, got "${format}"`);
  if (numbers.screenshot_quality !== undefined && format === 'png') return invalid('screenshot_quality', 'only with screenshot_format=jpeg');
  const blocked = parseBlockResources(given('block_resources'));
  if (!blocked.ok) return invalid('block_resources', blocked.detail);
  const selector = given('screenshot_selector');
  const area: ScreenshotRequest['area'] | undefined = selector ? 'element' : flags.screenshot_fullpage ? 'fullpage' : flags.screenshot ? 'viewport' : undefined;
  const screenshot: ScreenshotRequest | undefined = area
    ? { area, ...(selector ? { selector } : {}), format: format === 'png' ? 'png' : 'jpeg', ...(numbers.screenshot_quality ? { quality: numbers.screenshot_quality } : {}) }
    : undefined;
  return {
    ok: true,
    value: {
      ...(instructions ? { instructions } : {}),
      ...(numbers.wait !== undefined ? { wait: numbers.wait } : {}),
      ...(given('wait_for') ? { waitFor: given('wait_for') } : {}),
      ...(blocked.value ? { blockResources: blocked.value } : {}),
      ...(device ? { device: device as Device } : {}),
      ...(numbers.window_width ? { windowWidth: numbers.window_width } : {}),
      ...(numbers.window_height ? { windowHeight: numbers.window_height } : {}),
      ...(screenshot ? { screenshot } : {}),
      ...(given('response_type')?.toLowerCase() === 'pdf' ? { pdf: true } : {}),
    },
  };
}

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
