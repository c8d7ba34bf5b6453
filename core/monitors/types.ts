/** The monitors' documents as stored (store.ts keeps the collections). */
import type { MonitorSchedule } from './schedule';

export type MonitorStatus = 'active' | 'paused' | 'deleted';
export type CheckStatus = 'running' | 'completed' | 'failed' | 'skipped';
export type PageChange = 'new' | 'same' | 'changed' | 'removed' | 'failed';

/** Extract's modes, as on Fetch (`extract=`). */
export type ExtractMode = 'auto' | 'native' | 'standard';

/** The outputs a monitor compares field by field (css_extractor's or Extract's), and its text on the main content only. */
export interface MonitorOutputs {
  css_extractor?: Record<string, unknown>;
  /** Extract's fields of the page's prepared domain (`fields` projects them, as `extract_fields` on Fetch). */
  extract?: { mode: ExtractMode; fields?: string[] };
  main_content?: boolean;
}

/**
 * A crawl-based monitor's crawl body, as POST /v1/crawls would store it (its defaults applied): the
 * pages checked are the start page and the results that crawl would find (core/crawls/link-rules.ts).
 */
export interface MonitorCrawl {
  url: string;
  depth?: number;
  max_items: number;
  max_pages: number;
  include_patterns: string[];
  exclude_patterns: string[];
  respect_robots: boolean;
  include_documents?: false;
}

/** Pages a check of `crawl` fetches at most: the start page and `max_items` results, never past `max_pages` (what monitor_urls counts). */
export const crawlPages = (crawl: Pick<MonitorCrawl, 'max_items' | 'max_pages'>): number => Math.min(crawl.max_pages, 1 + crawl.max_items);

export interface MonitorDoc {
  _id: string;
  account_id: string;
  key_id: string;
  name: string;
  /** What a crawl-based monitor walks; null for one of listed URLs (its list is in `monitor_lists`, lists.ts). */
  crawl: MonitorCrawl | null;
  schedule: MonitorSchedule;
  outputs: MonitorOutputs;
  webhook: { url: string; signature: boolean } | null;
  status: MonitorStatus;
  /** URLs this monitor counts against the account's `monitor_urls`. */
  url_count: number;
  /** A check ended that recorded the baseline: later checks announce changes. */
  baseline_at: Date | null;
  last_check_id: string | null;
  check_count: number;
  created_at: Date;
  updated_at: Date;
}

/** A monitor as it is shown: with its URLs (null for a crawl-based one). */
export type ShownMonitor = MonitorDoc & { urls: string[] | null };

/**
 * A monitor's URL list, kept apart from the monitor's document so that the reads of the monitor (each
 * request about it, each step of a check) do not carry 50,000 URLs: `<monitor>|urls` the URLs checked,
 * `<monitor>|last` the URLs the last completed check found (a page of those no longer found is removed).
 */
export interface ListDoc {
  _id: string;
  monitor_id: string;
  urls: string[];
  /** Set when the monitor is deleted (retention removes the list with it). */
  deleted?: true;
  updated_at: Date;
}

export interface CheckCounts {
  pages_checked: number;
  new: number;
  changed: number;
  removed: number;
  same: number;
  failed: number;
  credits: number;
}

export interface CheckDoc extends CheckCounts {
  _id: string;
  monitor_id: string;
  account_id: string;
  trigger: 'scheduled' | 'manual';
  status: CheckStatus;
  /** The first check: it records the versions later ones compare with, and announces nothing. */
  baseline: boolean;
  started_at: Date;
  ended_at: Date | null;
  /** When the check was due (the Schedule's action time), for a scheduled one. */
  scheduled_at: Date | null;
  reason?: string;
  detail?: string;
}

export interface PageDoc {
  _id: string;
  check_id: string;
  monitor_id: string;
  url: string;
  change: PageChange;
  credits: number;
  fetched_at: Date;
  previous_fetched_at: Date | null;
  diff: { text: string; fields: Record<string, { previous: unknown; current: unknown }> } | null;
  error?: string;
  /** A crawl-based monitor's opened page: the links its crawl admits, as linked (a retried attempt follows them again). */
  links?: string[];
}

export interface LockDoc {
  _id: string;
  check_id: string;
  at: Date;
}


/**
 * A part of a check, written once at its end, after its pages: a URL monitor's pages found the same
 * are kept here together, not one document each (most pages of most checks are the same), and the
 * other pages it stored are listed by id, so a check is read by `_id` only (core/monitors/stored.ts).
 * The part numbered -1 lists the check's removed pages.
 */
export interface PartDoc {
  _id: string;
  check_id: string;
  part: number;
  same_urls: string[];
  same_credits: number;
  /** The pages of `monitor_pages` this part stored. */
  page_ids: string[];
  /** When it was written (retention). */
  at: Date;
}
