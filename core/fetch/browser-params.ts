/**
 * The browser parameters of Fetch as the interface spells them (snake_case), typed by the schema
 * (numbers, flags and enumerations are parsed once, there), to the engine's camel-case
 * `BrowserOptions`, checked before any browser is touched. This is the one place the engine's options
 * meet the interface's names: the HTTP route, the MCP tools and Batch tasks all come through here.
 * What is left here: the rules between parameters (`wait` needs `js_render`, `screenshot_quality` needs
 * jpeg, ...) and the parameters that are languages of their own (`js_instructions`, `block_resources`,
 * the `wait_for` selector). A bad value is an `invalid_parameter` failure naming the parameter (`REQS004`).
 */
import { invalidSelector, parseBlockResources, parseInstructions, type BrowserOptions, type Device, type RenderError, type ScreenshotRequest } from '../../engine';

/** The browser parameters, named as the interface spells them, typed as the schema checked them. */
export interface BrowserParams {
  js_instructions?: string;
  wait?: number;
  wait_for?: string;
  screenshot?: boolean;
  screenshot_fullpage?: boolean;
  screenshot_selector?: string;
  screenshot_format?: 'png' | 'jpeg' | 'jpg';
  screenshot_quality?: number;
  device?: Device;
  window_width?: number;
  window_height?: number;
  block_resources?: string;
  response_type?: string;
}

/** Parameters that need `js_render`, in the order a refusal names them. */
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

export type BrowserParamsParse =
  | { ok: true; value: Omit<BrowserOptions, 'captureXhr'> }
  | { ok: false; error: RenderError };

const invalid = (parameter: string, detail: string): BrowserParamsParse => ({
  ok: false,
  error: { kind: 'invalid_parameter', parameter, detail: `${parameter}: ${detail}` },
});

/** A parameter that asks for something: given, not empty, and not `false` (a screenshot flag may be sent off). */
const asks = (value: unknown): boolean => value !== undefined && value !== '' && value !== false;

export function parseBrowserParams(params: BrowserParams, jsRender: boolean): BrowserParamsParse {
  const text = (name: 'js_instructions' | 'wait_for' | 'screenshot_selector' | 'block_resources'): string | undefined => (params[name] === '' ? undefined : params[name]);
  const pdf = params.response_type?.toLowerCase() === 'pdf';
  if (!jsRender) {
    const needy = BROWSER_ONLY.find((name) => asks(params[name]));
    if (needy) return invalid(needy, 'requires js_render=true');
    // Markdown and plain text come from any page; a PDF is printed by the browser.
    if (pdf) return invalid('response_type', 'pdf requires js_render=true');
  }
  let instructions: BrowserOptions['instructions'];
  const rawInstructions = text('js_instructions');
  if (rawInstructions !== undefined) {
    const parsed = parseInstructions(rawInstructions);
    if (!parsed.ok) return { ok: false, error: { kind: 'invalid_parameter', parameter: 'js_instructions', detail: parsed.error.detail } };
    instructions = parsed.instructions;
  }
  // Checked here, before any browser: a selector that does not compile would only fail at the wait.
  const waitFor = text('wait_for');
  if (waitFor !== undefined && invalidSelector(waitFor) !== undefined) return invalid('wait_for', `is not a valid CSS selector: "${waitFor.slice(0, 200)}"`);
  const format = params.screenshot_format ?? 'png';
  if (params.screenshot_quality !== undefined && format === 'png') return invalid('screenshot_quality', 'only with screenshot_format=jpeg');
  const blocked = parseBlockResources(text('block_resources'));
  if (!blocked.ok) return invalid('block_resources', blocked.detail);
  const selector = text('screenshot_selector');
  const area: ScreenshotRequest['area'] | undefined = selector ? 'element' : params.screenshot_fullpage ? 'fullpage' : params.screenshot ? 'viewport' : undefined;
  const screenshot: ScreenshotRequest | undefined = area
    ? { area, ...(selector ? { selector } : {}), format: format === 'png' ? 'png' : 'jpeg', ...(params.screenshot_quality ? { quality: params.screenshot_quality } : {}) }
    : undefined;
  return {
    ok: true,
    value: {
      ...(instructions ? { instructions } : {}),
      ...(params.wait !== undefined ? { wait: params.wait } : {}),
      ...(waitFor ? { waitFor } : {}),
      ...(blocked.value ? { blockResources: blocked.value } : {}),
      ...(params.device ? { device: params.device } : {}),
      ...(params.window_width ? { windowWidth: params.window_width } : {}),
      ...(params.window_height ? { windowHeight: params.window_height } : {}),
      ...(screenshot ? { screenshot } : {}),
      ...(pdf ? { pdf: true } : {}),
    },
  };
}
