/**
 * What one page may cost an HTML output: the parse caps the pre-scan enforces (scan/), their defaults
 * (the HTML_MAX_* settings of base/config.ts default to the same values), and the refusal every output
 * throws, naming the cap or the budget a page went past.
 */
import type { ParseCap, ParseCaps } from './scan';

export type { ParseCap, ParseCaps } from './scan';

/**
 * 10 MiB of HTML (a plain fetch is at most FETCH_MAX_BYTES, 10 MB, but a rendered page has no other
 * bound); 200,000 nodes, the cap on work (a 10 MB page of ordinary sites makes about 165,000, ordinary
 * pages a few thousand); 50,000 elements open at once. Nesting past 400 levels is flattened to text,
 * as browsers do, and costs little more (what is left open at the end counts in the nodes), so the
 * depth cap only bounds the parser's stack: nesting 40,000 deep still reads.
 */
export const DEFAULT_PARSE_CAPS: Readonly<ParseCaps> = { maxChars: 10 * 1024 * 1024, maxNodes: 200_000, maxDepth: 50_000 };

/** A parse cap, or the budget of the worker thread the output ran on (`busy`: no thread nor queue place free). */
export type HtmlLimit = ParseCap | 'time' | 'memory' | 'busy';

const DESCRIBE: Record<HtmlLimit, (value: number) => string> = {
  size: (value) => `The page has more than ${value.toLocaleString('en')} characters of HTML`,
  nodes: (value) => `The page would make more than ${value.toLocaleString('en')} nodes when parsed`,
  depth: (value) => `The page nests more than ${value.toLocaleString('en')} elements`,
  time: (value) => `Reading the page took longer than the ${value.toLocaleString('en')} ms one page may take`,
  memory: (value) => `Reading the page needed more than the ${value.toLocaleString('en')} MB one page may use`,
  busy: () => 'Every thread that reads large pages is busy and their queue is full',
};

/** An HTML output refused a page: `limit` is what it went past, `value` that limit's value. */
export class HtmlRefused extends Error {
  readonly kind = 'html-refused';

  constructor(
    readonly limit: HtmlLimit,
    readonly value: number,
  ) {
    super(DESCRIBE[limit](value));
    this.name = 'HtmlRefused';
  }
}

/** Discriminates without `instanceof` (an error may come from another copy of the module). */
export const isHtmlRefused = (error: unknown): error is HtmlRefused =>
  typeof error === 'object' && error !== null && (error as { kind?: unknown }).kind === 'html-refused';
