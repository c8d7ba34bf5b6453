/**
 * Crawl cursors (core/jobs/cursor.ts). A results cursor names its crawl and a position in the crawl's
 * published results (commit batch, commit within it, result within that commit), so reading again
 * from it returns only what was published after. A list cursor names the last crawl of the previous page.
 */
import { cursorCodec, wholeNumber } from '../jobs/cursor';

export interface ResultPosition {
  batch: number;
  commit: number;
  offset: number;
}

export const START: ResultPosition = { batch: 0, commit: 0, offset: 0 };

const results = cursorCodec<ResultPosition>('r1', {
  write: (position) => [String(position.batch), String(position.commit), String(position.offset)],
  read(parts) {
    if (parts.length !== 3) return undefined;
    const [batch, commit, offset] = parts.map((part) => wholeNumber(part));
    return batch === undefined || commit === undefined || offset === undefined ? undefined : { batch, commit, offset };
  },
});

const list = cursorCodec<string>('l1', {
  write: (lastCrawlId) => [lastCrawlId],
  read: (parts) => (parts.length === 1 && /^c_[0-9a-z]+$/.test(parts[0] ?? '') ? parts[0] : undefined),
});

export const encodeResultCursor = (crawlId: string, position: ResultPosition): string => results.encode(crawlId, position);

export type DecodedResultCursor = { ok: true; position: ResultPosition } | { ok: false; reason: 'malformed' | 'other_crawl' };

export function decodeResultCursor(crawlId: string, cursor: string): DecodedResultCursor {
  const decoded = results.decode(crawlId, cursor);
  if (decoded.ok) return decoded;
  return { ok: false, reason: decoded.reason === 'other_resource' ? 'other_crawl' : 'malformed' };
}

export const encodeListCursor = (lastCrawlId: string): string => list.encode(null, lastCrawlId);

export function decodeListCursor(cursor: string): string | undefined {
  const decoded = list.decode(null, cursor);
  return decoded.ok ? decoded.position : undefined;
}
