/**
 * Where a crawl lives in MongoDB, shaped for FerretDB as much as for MongoDB: on FerretDB only inserts
 * (checked by unique indexes) are cheap at any size, and every other read or update scans its whole
 * collection, even by `_id`. So the hot path only inserts, large lists are stored in parts of a few
 * hundred entries, and every read is an `_id` look-up whose key the reader can compute.
 *
 * | collection      | one document per                       | `_id`                          | written by                   |
 * |-----------------|----------------------------------------|--------------------------------|------------------------------|
 * | crawls          | crawl: request, counters, publish state | crawl id                      | API (insert), publish (only) |
 * | crawl_ends      | ended crawl: status, reason, time      | crawl id                       | stop call or workflow, first insert wins |
 * | crawl_urls      | normalized URL met (the seen-set)      | crawl id + URL key hash        | slices, insert-only          |
 * | crawl_found     | part of a slice's new URLs, in order   | crawl, slice, attempt, part    | slices, insert-only          |
 * | crawl_commits   | batch of slices whose URLs are results | crawl, batch number            | publish, insert-only         |
 * | crawl_outcomes  | fetch outcome of a block of results    | crawl, slice, block            | slices                       |
 * | crawl_charges   | billed slice (the settle marker)       | crawl, slice                   | slices, insert-only          |
 *
 * Kept pages are blobs of the crawl in the blob store (kept-pages.ts, core/jobs/blobs.ts).
 */
import { createHash } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import type { IndexRegistration } from '../../base/db';
import type { ChargeDoc } from '../jobs/charges';
import type { CrawlEnd, CrawlErrorCode, StopReason, Coverage, CrawlStatus, CrawlWebhook } from './types';

export interface CrawlDoc {
  _id: string;
  account_id: string;
  key_id: string;
  url: string;
  domain: string;
  depth?: number;
  max_items: number;
  max_pages: number;
  include_patterns: string[];
  exclude_patterns: string[];
  /** Told of the crawl's moments by signed webhook events (core/crawls/work/webhooks.ts). */
  webhook?: CrawlWebhook;
  output_format?: 'html' | 'markdown';
  /** Pages are served as their main content (shaped when read; the stored HTML is the whole page). */
  main_content?: boolean;
  /** Pages robots.txt disallows are skipped (absent on crawls stored before the option: not respected). */
  respect_robots?: boolean;
  /** Each fetched result is recorded in its URL's history (core/changes), under the tag when given. */
  track_changes?: boolean;
  change_tracking_tag?: string;
  /** Documents are skipped (stored only when false: absent means they are results). */
  include_documents?: false;
  created_at: Date;
  /** Mirror of the end record once the workflow saw it (reads merge `crawl_ends` anyway). */
  status: CrawlStatus;
  stop_reason?: StopReason;
  error?: { code: CrawlErrorCode; detail: string };
  finished_at?: Date;
  coverage: Coverage;
  duplicates_removed: number;
  /** Commit batches written so far (`crawl_commits` 0 … published − 1). */
  published: number;
  /** True once no result can land any more. */
  settled: boolean;
}

/** The request part of a crawl document; everything else starts zeroed. */
export type CrawlRequestFields = Pick<
  CrawlDoc,
  | '_id'
  | 'account_id'
  | 'key_id'
  | 'url'
  | 'domain'
  | 'depth'
  | 'max_items'
  | 'max_pages'
  | 'include_patterns'
  | 'exclude_patterns'
  | 'webhook'
  | 'output_format'
  | 'main_content'
  | 'respect_robots'
  | 'track_changes'
  | 'change_tracking_tag'
  | 'include_documents'
>;

/** A crawl as it is stored when it starts: running, nothing fetched, nothing published. */
export function newCrawlDocument(request: CrawlRequestFields, now: Date = new Date()): CrawlDoc {
  return {
    ...request,
    created_at: now,
    status: 'running',
    coverage: { pages_fetched: 0, pages_failed: 0, items_found: 0 },
    duplicates_removed: 0,
    published: 0,
    settled: false,
  };
}

export interface CrawlEndDoc extends CrawlEnd {
  _id: string;
  finished_at: Date;
}

export interface UrlDoc {
  _id: string;
  crawl_id: string;
  url: string;
  /** The form the URL was linked in, when it is not `url` (what is fetched). */
  fetch?: string;
  depth: number;
  /** Slice that claimed the URL (−1: the start URL). */
  slice: number;
}

export interface FoundDoc {
  _id: string;
  crawl_id: string;
  /** Found URLs in order, and each one's link steps from the start (FerretDB stores no nested arrays). */
  urls: string[];
  depths: number[];
  /** Each URL's linked form when it differs from the presented one ('' when not); absent: none differs. */
  fetch?: string[];
}

export interface CommitBatchDoc {
  _id: string;
  crawl_id: string;
  commits: Array<{ k: number; a: number; kept: number; base: number }>;
}

export interface OutcomeDoc {
  _id: string;
  crawl_id: string;
  /** One character per result of the block: `f` fetched, `x` failed, `p` not fetched. */
  s: string;
  /** Crawls with track_changes: one character per result, its change status (`changeMarks`). */
  c?: string;
}

export const CRAWL_INDEXES: IndexRegistration = {
  crawls: [{ key: { account_id: 1, _id: -1 }, name: 'account_newest' }],
  crawl_urls: [{ key: { crawl_id: 1, slice: 1 }, name: 'crawl_slice' }],
  crawl_found: [{ key: { crawl_id: 1 }, name: 'crawl' }],
  crawl_commits: [{ key: { crawl_id: 1 }, name: 'crawl' }],
  crawl_outcomes: [{ key: { crawl_id: 1 }, name: 'crawl' }],
  crawl_charges: [{ key: { crawl_id: 1 }, name: 'crawl' }],
};

export interface CrawlCollections {
  crawls: Collection<CrawlDoc>;
  ends: Collection<CrawlEndDoc>;
  urls: Collection<UrlDoc>;
  found: Collection<FoundDoc>;
  commits: Collection<CommitBatchDoc>;
  outcomes: Collection<OutcomeDoc>;
  charges: Collection<ChargeDoc>;
}

export function crawlCollections(db: Db): CrawlCollections {
  return {
    crawls: db.collection<CrawlDoc>('crawls'),
    ends: db.collection<CrawlEndDoc>('crawl_ends'),
    urls: db.collection<UrlDoc>('crawl_urls'),
    found: db.collection<FoundDoc>('crawl_found'),
    commits: db.collection<CommitBatchDoc>('crawl_commits'),
    outcomes: db.collection<OutcomeDoc>('crawl_outcomes'),
    charges: db.collection<ChargeDoc>('crawl_charges'),
  };
}

/** Keys of the documents above; every reader computes them instead of searching. */
export const ids = {
  url: (crawlId: string, key: string): string => `${crawlId}|${createHash('sha256').update(key).digest('base64url').slice(0, 22)}`,
  found: (crawlId: string, k: number, a: number, part: number): string => `${crawlId}|${k}|${a}|${part}`,
  commits: (crawlId: string, batch: number): string => `${crawlId}|${batch}`,
  outcome: (crawlId: string, k: number, block: number): string => `${crawlId}|${k}|${block}`,
  contentId: (k: number, index: number): string => `${k}-${index}`,
  charge: (crawlId: string, k: number): string => `${crawlId}|${k}`,
};

/** A result's fetch outcome, as readers and slices speak of it (`skipped`: its site's robots.txt disallows it). */
/** `skipped`: robots.txt disallows the page; `skipped_document`: a document, and the crawl skips documents. */
export type ContentStatus = 'pending' | 'fetched' | 'failed' | 'skipped' | 'skipped_document';

const MARK_OF: Record<ContentStatus, string> = { fetched: 'f', failed: 'x', pending: 'p', skipped: 's', skipped_document: 'd' };

/** The outcome documents' one-character marks (`s`), written and read only here. */
export const outcomeMarks = {
  encode: (statuses: ReadonlyArray<ContentStatus | undefined>): string => Array.from({ length: statuses.length }, (_, index) => MARK_OF[statuses[index] ?? 'pending']).join(''),
  decode: (marks: string, position: number): ContentStatus => {
    const mark = marks[position];
    return mark === 'f' ? 'fetched' : mark === 'x' ? 'failed' : mark === 's' ? 'skipped' : mark === 'd' ? 'skipped_document' : 'pending';
  },
};

/** A result's change status in a tracked crawl (`removed` ones are listed apart, core/changes/crawls.ts). */
export type ResultChange = 'new' | 'same' | 'changed';

const CHANGE_MARK: Record<ResultChange, string> = { new: 'n', same: 's', changed: 'c' };

/** The outcome documents' change marks (`c`): `-` for a result without one (not fetched). */
export const changeMarks = {
  encode: (changes: ReadonlyArray<ResultChange | undefined>): string =>
    Array.from({ length: changes.length }, (_, index) => (changes[index] ? CHANGE_MARK[changes[index] as ResultChange] : '-')).join(''),
  decode: (marks: string | undefined, position: number): ResultChange | undefined => {
    const mark = marks?.[position];
    return mark === 'n' ? 'new' : mark === 's' ? 'same' : mark === 'c' ? 'changed' : undefined;
  },
};

/** Ten minutes after a stop, pages still in flight are no longer kept. */
export const POST_STOP_WINDOW_MS = 10 * 60 * 1000;
