/**
 * Types shared by the crawl API, the crawl activities and the crawl workflow. Pure declarations: the
 * workflow bundle imports this file, so it must not import anything with I/O.
 */

export type CrawlStatus = 'running' | 'completed' | 'stopped' | 'failed';
export type StopReason = 'max_items' | 'max_pages' | 'user';
export type CrawlErrorCode = 'seed_unreachable' | 'no_items_found' | 'insufficient_credits' | 'internal_error' | 'domain_not_allowed';

/** Moments a crawl's webhook can be told of (our extension): `crawl.<event>` events. */
export type CrawlWebhookEvent = 'started' | 'completed' | 'stopped' | 'failed' | 'page.failed';
export const CRAWL_WEBHOOK_EVENTS: readonly CrawlWebhookEvent[] = ['started', 'completed', 'stopped', 'failed', 'page.failed'];
/** What a webhook without `events` is told: the four lifecycle moments (`page.failed` only when listed). */
export const DEFAULT_CRAWL_WEBHOOK_EVENTS: readonly CrawlWebhookEvent[] = ['started', 'completed', 'stopped', 'failed'];

/** A crawl's webhook as checked at the start (a public https URL; signing needs an active key then). */
export interface CrawlWebhook {
  url: string;
  signature: boolean;
  events: CrawlWebhookEvent[];
}

/** How a crawl ended: decided once, by whichever of the stop call and the workflow inserts it first. */
export interface CrawlEnd {
  status: Exclude<CrawlStatus, 'running'>;
  stop_reason?: StopReason;
  error?: { code: CrawlErrorCode; detail: string };
}

/** What a crawl was asked to do, as the workflow and its activities need it. */
export interface CrawlSpec {
  crawlId: string;
  accountId: string;
  keyId: string;
  /** The start URL as given (opened first, never returned). */
  url: string;
  /** Registrable domain the crawl stays on (subdomains included). */
  domain: string;
  depth?: number;
  maxItems: number;
  maxPages: number;
  include: string[];
  exclude: string[];
  /** The crawl's webhook: its slices and publishes write and deliver its events (core/crawls/work/webhooks.ts). */
  webhook?: CrawlWebhook;
  /** When the crawl was created (ISO): the time part of its events' ids. */
  createdAt?: string;
  outputFormat?: 'html' | 'markdown';
  /** Skip (never fetch, never bill) what the site's robots.txt disallows. */
  respectRobots?: boolean;
  /** Record each fetched result in its URL's history (core/changes), under this tag when given: every result is fetched. */
  trackChanges?: boolean;
  changeTag?: string;
  /** false: documents are skipped (links to document file names dropped, document answers unbilled); absent: they are results. */
  includeDocuments?: false;
}

/** Knobs of the crawl loop, fixed when the crawl starts (from config; tests may pass their own). */
export interface CrawlTuning {
  /** Pages one slice activity fetches at most (a multiple of OUTCOME_BLOCK). */
  slicePages: number;
  /** Slice activities in flight at once. */
  window: number;
  /** Pages of this crawl fetched at once by one worker. */
  concurrency: number;
  /** History events after which the workflow continues as new. */
  historyLimit: number;
}

/** Found URLs are stored in parts of this many entries (`crawl_found`). */
export const FOUND_PART = 500;
/** Fetch outcomes of kept pages are stored per block of this many results (`crawl_outcomes`). */
export const OUTCOME_BLOCK = 25;

/** A run of work for a slice: entries `[from, to)` of the URLs slice `k` (attempt `a`) kept. */
export interface WorkRange {
  k: number;
  a: number;
  from: number;
  to: number;
  /** Link steps from the start URL of these URLs. */
  depth: number;
}

export interface SliceInput {
  spec: CrawlSpec;
  tuning: CrawlTuning;
  /** This slice's number, unique in the crawl; 0 is the start page. */
  k: number;
  ranges: WorkRange[];
}

export interface SliceResult {
  k: number;
  /** The attempt whose found URLs this result describes (their storage key). */
  attempt: number;
  /** New URLs claimed (in scope, within patterns, not seen before), in order. */
  found: number;
  /** Link steps of the found URLs. */
  foundDepth: number;
  /** Pages this slice fetched (or tried to), and of those the ones that failed. */
  fetched: number;
  failed: number;
  /** Links met again and dropped. */
  duplicates: number;
  /** Credits settled for this slice. */
  credits: number;
  /** Items left unfetched because the crawl ended (stop) while the slice ran. */
  skipped: number;
  /** The account could not pay for a page. */
  refused: boolean;
  /** The crawl's end record existed: the slice stopped taking new pages. */
  halted: boolean;
  /** Only on slice 0: whether the start page could be read, and why not. */
  seed?: { ok: true } | { ok: false; detail: string };
}

/** A slice's kept URLs in result order: results `base … base + kept - 1`. */
export interface Commit {
  k: number;
  a: number;
  kept: number;
  base: number;
}

export interface Coverage {
  pages_fetched: number;
  pages_failed: number;
  items_found: number;
}

/** What the workflow publishes to the crawl document (the API reads only MongoDB). */
export interface Progress {
  coverage: Coverage;
  duplicates_removed: number;
  /** Commits to append as the next batch (none: counters only). */
  commits: Commit[];
  /** Number of the batch these commits form. */
  batch: number;
  /** No result can land any more: readers may answer `next_cursor: null` at the end. */
  settled: boolean;
}
