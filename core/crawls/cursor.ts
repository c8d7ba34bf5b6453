/**
 * Opaque cursors. A results cursor names its crawl and a position in the crawl's published results
 * (commit batch, commit within it, result within that commit), so reading again from it returns only
 * what was published after. A list cursor names the last crawl of the previous page.
 */

export interface ResultPosition {
  batch: number;
  commit: number;
  offset: number;
}

export const START: ResultPosition = { batch: 0, commit: 0, offset: 0 };

const encode = (text: string): string => Buffer.from(text, 'utf8').toString('base64url');

function decode(cursor: string): string | undefined {
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(cursor)) return undefined;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  return encode(text) === cursor ? text : undefined;
}

export function encodeResultCursor(crawlId: string, position: ResultPosition): string {
  return encode(`r1.${crawlId}.${position.batch}.${position.commit}.${position.offset}`);
}

export type DecodedResultCursor = { ok: true; position: ResultPosition } | { ok: false; reason: 'malformed' | 'other_crawl' };

export function decodeResultCursor(crawlId: string, cursor: string): DecodedResultCursor {
  const match = /^r1\.([a-z]+_[0-9a-z]+)\.(\d{1,9})\.(\d{1,9})\.(\d{1,9})$/.exec(decode(cursor) ?? '');
  if (!match) return { ok: false, reason: 'malformed' };
  if (match[1] !== crawlId) return { ok: false, reason: 'other_crawl' };
  return { ok: true, position: { batch: Number(match[2]), commit: Number(match[3]), offset: Number(match[4]) } };
}

export const encodeListCursor = (lastCrawlId: string): string => encode(`l1.${lastCrawlId}`);

export function decodeListCursor(cursor: string): string | undefined {
  const match = /^l1\.(c_[0-9a-z]+)$/.exec(decode(cursor) ?? '');
  return match?.[1];
}
