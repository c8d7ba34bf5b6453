/**
 * `js_instructions`: a JSON array of one-key objects (`[{"click": "#more"}, {"wait": 500}]`). Each kind
 * is a row of `KINDS`: how its argument is checked and how it runs on a page. `parseInstructions` runs
 * before any browser is touched and fails with the parameter named (`REQS004`); `runInstructions`
 * (instructions-run.ts) executes them within the request's time budget and reports each one.
 */
import type { Frame, Page } from 'playwright-core';

export const WAIT_EVENTS = ['networkidle', 'load', 'domcontentloaded'] as const;
type WaitEvent = (typeof WAIT_EVENTS)[number];

/** Longest single `wait` (the same bound as the `wait` parameter). */
export const MAX_WAIT_MS = 30_000;
export const MAX_INSTRUCTIONS = 100;
const MAX_SELECTOR = 2_000;
const MAX_SCRIPT = 100_000;
const MAX_SCROLL = 1_000_000;

/** Argument shapes, as checked values; `string` results are error messages. */
type Check<A> = (value: unknown) => A | { error: string };

const err = (error: string): { error: string } => ({ error });

const text =
  (what: string, max: number): Check<string> =>
  (value) =>
    typeof value === 'string' && value.trim() !== '' && value.length <= max ? value : err(`expects ${what} (a non-empty string of at most ${max} characters)`);

const selector = text('a CSS selector', MAX_SELECTOR);
const script = text('a script', MAX_SCRIPT);
const value: Check<string> = (raw) =>
  typeof raw === 'string' || typeof raw === 'number' ? String(raw) : err('expects a value (a string or a number)');

const integer =
  (what: string, min: number, max: number): Check<number> =>
  (raw) =>
    typeof raw === 'number' && Number.isInteger(raw) && raw >= min && raw <= max ? raw : err(`expects ${what} (an integer from ${min} to ${max})`);

const oneOf =
  <T extends string>(values: readonly T[]): Check<T> =>
  (raw) =>
    values.includes(raw as T) ? (raw as T) : err(`expects one of ${values.join(', ')}`);

/** A fixed-length array argument, each position checked by its own rule. */
function tuple<A extends unknown[]>(names: string, ...checks: { [K in keyof A]: Check<A[K]> }): Check<A> {
  return (raw) => {
    if (!Array.isArray(raw) || raw.length !== checks.length) return err(`expects an array [${names}]`);
    const out: unknown[] = [];
    for (const [index, check] of checks.entries()) {
      const checked = (check as Check<unknown>)(raw[index]);
      if (isError(checked)) return err(`[${names}]: position ${index + 1} ${checked.error}`);
      out.push(checked);
    }
    return out as A;
  };
}

const isError = (value: unknown): value is { error: string } =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as { error?: unknown }).error === 'string';

/** What a kind needs to run: the page, its checked argument and the time it may take. */
interface KindSpec<A> {
  check: Check<A>;
  run(page: Page, arg: A, timeoutMs: number): Promise<unknown>;
}

const kind = <A>(spec: KindSpec<A>): KindSpec<unknown> => spec as KindSpec<unknown>;

async function frameOf(page: Page, iframe: string, timeoutMs: number): Promise<Frame> {
  const handle = await page.locator(iframe).first().elementHandle({ timeout: timeoutMs });
  const frame = await handle?.contentFrame();
  if (!frame) throw new Error(`${iframe} is not an iframe with a document`);
  return frame;
}

const scrollBy = (page: Page, x: number, y: number): Promise<unknown> =>
  page.evaluate(`window.scrollBy(${x}, ${y})`);

export const KINDS = {
  click: kind({ check: selector, run: (page, sel, timeout) => page.locator(sel).first().click({ timeout }) }),
  wait: kind({ check: integer('milliseconds', 0, MAX_WAIT_MS), run: (page, ms) => page.waitForTimeout(ms) }),
  wait_for: kind({ check: selector, run: (page, sel, timeout) => page.locator(sel).first().waitFor({ state: 'attached', timeout }) }),
  wait_event: kind({ check: oneOf(WAIT_EVENTS), run: (page, event: WaitEvent, timeout) => page.waitForLoadState(event, { timeout }) }),
  fill: kind({ check: tuple<[string, string]>('selector, value', selector, value), run: (page, [sel, val], timeout) => page.locator(sel).first().fill(val, { timeout }) }),
  check: kind({ check: selector, run: (page, sel, timeout) => page.locator(sel).first().check({ timeout }) }),
  uncheck: kind({ check: selector, run: (page, sel, timeout) => page.locator(sel).first().uncheck({ timeout }) }),
  select_option: kind({
    check: tuple<[string, string]>('selector, value', selector, value),
    run: (page, [sel, val], timeout) => page.locator(sel).first().selectOption(val, { timeout }),
  }),
  scroll_x: kind({ check: integer('pixels', -MAX_SCROLL, MAX_SCROLL), run: (page, px) => scrollBy(page, px, 0) }),
  scroll_y: kind({ check: integer('pixels', -MAX_SCROLL, MAX_SCROLL), run: (page, px) => scrollBy(page, 0, px) }),
  evaluate: kind({ check: script, run: (page, js) => page.evaluate(js) }),
  frame_click: kind({
    check: tuple<[string, string]>('iframe selector, selector', selector, selector),
    run: (page, [frame, sel], timeout) => page.frameLocator(frame).locator(sel).first().click({ timeout }),
  }),
  frame_wait_for: kind({
    check: tuple<[string, string]>('iframe selector, selector', selector, selector),
    run: (page, [frame, sel], timeout) => page.frameLocator(frame).locator(sel).first().waitFor({ state: 'attached', timeout }),
  }),
  frame_fill: kind({
    check: tuple<[string, string, string]>('iframe selector, selector, value', selector, selector, value),
    run: (page, [frame, sel, val], timeout) => page.frameLocator(frame).locator(sel).first().fill(val, { timeout }),
  }),
  frame_evaluate: kind({
    check: tuple<[string, string]>('iframe selector, script', selector, script),
    run: async (page, [frame, js], timeout) => (await frameOf(page, frame, timeout)).evaluate(js),
  }),
} satisfies Record<string, KindSpec<unknown>>;

export type InstructionKind = keyof typeof KINDS;

export interface Instruction {
  kind: InstructionKind;
  /** The argument after checking (a selector, a number, a tuple). */
  arg: unknown;
}

export interface InstructionsParseError {
  kind: 'invalid_parameter';
  parameter: 'js_instructions';
  detail: string;
}

export type InstructionsParse = { ok: true; instructions: Instruction[] } | { ok: false; error: InstructionsParseError };

const invalid = (detail: string): InstructionsParse => ({ ok: false, error: { kind: 'invalid_parameter', parameter: 'js_instructions', detail: `js_instructions: ${detail}` } });

/** Checks the raw parameter (a JSON text, or an already parsed array) without touching a browser. */
export function parseInstructions(raw: string | unknown): InstructionsParse {
  let parsed: unknown = raw;
  if (typeof raw === 'string') {
    try {
      parsed = JSON.parse(raw);
    } catch {
      return invalid('is not valid JSON');
    }
  }
  if (!Array.isArray(parsed)) return invalid('must be a JSON array of instructions');
  if (parsed.length > MAX_INSTRUCTIONS) return invalid(`at most ${MAX_INSTRUCTIONS} instructions`);
  const instructions: Instruction[] = [];
  for (const [index, item] of parsed.entries()) {
    const at = `instruction ${index + 1}`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return invalid(`${at} must be an object with one key`);
    const keys = Object.keys(item);
    if (keys.length !== 1) return invalid(`${at} must have exactly one key, has ${keys.length}`);
    const name = keys[0] as string;
    if (!Object.hasOwn(KINDS, name)) return invalid(`${at}: unknown instruction "${name}" (known: ${Object.keys(KINDS).join(', ')})`);
    const spec = KINDS[name as InstructionKind];
    const arg = spec.check((item as Record<string, unknown>)[name]);
    if (isError(arg)) return invalid(`${at}: ${name} ${arg.error}`);
    instructions.push({ kind: name as InstructionKind, arg });
  }
  return { ok: true, instructions };
}

export interface InstructionOutcome {
  instruction: InstructionKind;
  params: unknown;
  success: boolean;
  /** True when the time budget ran out before this instruction could start. */
  skipped?: boolean;
  duration_ms: number;
  error?: string;
  /** What `evaluate` and `frame_evaluate` returned, when it is JSON (cut at 1 KB). */
  result?: unknown;
}

/** `js_instructions_report` of `json_response`. */
export interface InstructionsReport {
  instructions: InstructionOutcome[];
  instructions_count: number;
  instructions_succeeded: number;
  instructions_failed: number;
  instructions_skipped: number;
  instructions_duration_ms: number;
}
