/**
 * A fetched page as change tracking keeps it: its bytes compressed (brotli, in the thread pool, never on
 * the event loop), the text it is compared on, and the page rebuilt from what was stored so that any
 * output can be computed again (`as_of`).
 */
import { promisify } from 'node:util';
import { brotliCompress, brotliDecompress, constants } from 'node:zlib';
import { decodeHtml, isHtml, type HtmlOutputs, type Page } from '../../engine';
import type { StoredContent } from './store';

const compress = promisify(brotliCompress);
const decompress = promisify(brotliDecompress);

/**
 * Brotli quality 3: pages compress to about a fifth (quality 5 gives about a sixth at several times
 * the CPU; bench/changes.ts reports what versions take), in the thread pool.
 */
const QUALITY = 3;
/** Largest page kept (bytes as fetched): a stored blob never decompresses past it. */
export const MAX_STORED_BYTES = 64 * 1024 * 1024;

export function pack(data: Buffer): Promise<Buffer> {
  return compress(data, {
    params: { [constants.BROTLI_PARAM_QUALITY]: QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: data.length },
  });
}

export function unpack(data: Buffer): Promise<Buffer> {
  return decompress(data, { maxOutputLength: MAX_STORED_BYTES });
}

/** What change tracking is handed of a fetched page. */
export interface Observation {
  /** The bytes as received (plain), or the rendered HTML as UTF-8 (browser). */
  body: Buffer;
  contentType?: string;
  /** Decoded HTML, when the caller has it (rendered pages; saves decoding again). */
  html?: string;
  /** Whether a browser rendered it. */
  rendered?: boolean;
  finalUrl: string;
  /** The target's HTTP status. */
  status: number;
  headers?: ReadonlyArray<readonly [string, string]>;
  /** The configuration that fetched it (rung id). */
  configuration?: string;
  /** The whole page's Markdown, when the caller made it already (`response_type=markdown`). */
  markdown?: string;
  /** Compared on its main content (a monitor's `main_content`): the article's Markdown, made only when the bytes differ from the last version's. */
  mainContent?: boolean;
  fetchedAt: Date;
}

const TEXT_TYPE = /^\s*(text\/|application\/(json|ld\+json|javascript|ecmascript|x-ndjson|csv|yaml|x-yaml)\b|[\w.+-]+\/[\w.+-]*\+json\b)/i;

export type ContentKind = 'html' | 'text' | 'binary';

export function contentKind(page: Pick<Observation, 'contentType' | 'body' | 'rendered'>): ContentKind {
  if (isHtml({ ...(page.contentType ? { contentType: page.contentType } : {}), body: page.body, rendered: page.rendered === true })) return 'html';
  if (page.contentType === undefined || TEXT_TYPE.test(page.contentType)) return 'text';
  return 'binary';
}

/**
 * The text a version is compared on: the Markdown of an HTML page (the service's converter: no
 * scripts, styles, comments, attributes but link targets and image sources, no form controls nor
 * hidden elements) or of its main content when asked (the whole page's when no block stands out), the
 * text of a text answer as it is, and one line naming the bytes of anything else.
 * The Markdown is made by the process's HTML outputs: inline for a small page, else on a worker thread,
 * under the parse caps (a page past one is refused with HtmlRefused, as a Fetch's shaping is).
 */
export async function comparedText(page: Observation, hash: string, outputs: HtmlOutputs): Promise<string> {
  if (page.markdown !== undefined && !page.mainContent) return page.markdown;
  const kind = contentKind(page);
  const source = page.html !== undefined ? { html: page.html } : { bytes: page.body, ...(page.contentType !== undefined ? { contentType: page.contentType } : {}) };
  if (kind === 'html' && page.mainContent) return outputs.run('mainContent', source, { url: page.finalUrl, format: 'markdown' });
  if (kind === 'html') return outputs.run('markdown', source, { url: page.finalUrl });
  if (kind === 'text') return decodeHtml(page.body, page.contentType);
  return `(binary content: ${page.body.length} bytes of ${page.contentType ?? 'unknown type'}, sha-256 ${hash})`;
}

/** A stored version's page, as the Fetch shaping reads a fetched one. */
export function pageOf(content: StoredContent, body: Buffer): Page {
  let headers: Array<[string, string]> = [];
  try {
    const parsed = JSON.parse(content.headers) as unknown;
    if (Array.isArray(parsed)) headers = parsed.filter((pair): pair is [string, string] => Array.isArray(pair) && typeof pair[0] === 'string' && typeof pair[1] === 'string');
  } catch {
    // Headers are informative only: a version without them still answers.
  }
  return {
    ok: true,
    status: content.status,
    headers,
    body,
    ...(content.content_type ? { contentType: content.content_type } : {}),
    ...(content.rendered ? { html: body.toString('utf8') } : {}),
    finalUrl: content.final_url,
  };
}
