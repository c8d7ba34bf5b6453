/**
 * Fetching the pages of one slice: the per-crawl limit (the per-host one is the installation's host
 * gate, which every try passes inside the retrieval), robots.txt when the crawl respects it,
 * `Retry-After`, billing per page through the slice's bill, the crawl's end checked before each page
 * starts (a stop lets pages in flight finish but starts no new one).
 */
import { decodeHtml, isHtml } from '../../../engine';
import { extractLinks, type PageLinks } from '../links';
import type { SliceBill } from '../charges';
import type { ContentStatus } from '../store';
import { billingOf, retryAfterMs, type PageFetch, type PageFetcher } from './fetcher';
import type { ResultChange } from '../store';

type PageFetchOk = Extract<PageFetch, { credits: number }>;
import type { Semaphore } from '../../../base/semaphore';
import { crawlDocument, type CrawlDocuments } from './documents';

export interface WorkItem {
  /** The URL as presented (results, contents). */
  url: string;
  /** The form the site linked it in, when it differs: what is requested. */
  fetch?: string;
  depth: number;
  /** Where the URL is a result (absent for the start page): the content id is `<k>-<index>`. */
  src?: { k: number; index: number };
  /** Open it for links (else it is fetched only for its HTML). */
  open: boolean;
}

export interface PageOutcome {
  /** `pending`: not fetched (the crawl ended first, or the account could not pay); `skipped`: robots.txt disallows it. */
  status: ContentStatus;
  credits: number;
  links?: PageLinks;
  /** Text of the page, when it is HTML or text (for `output_format`); a document's converted text. */
  html?: string;
  /** The kept text is a converted document of this format (served as it is stored). */
  document?: string;
  httpStatus?: number;
  /** Where the page was answered from, after redirects, and what it said it is. */
  finalUrl?: string;
  contentType?: string;
  detail?: string;
  /** The kind of failure when the page could not be read at all (timeout, dns, blocked, …). */
  errorKind?: string;
  refused?: boolean;
  /** The page as fetched, when asked for (crawls with track_changes record it). */
  page?: Pick<PageFetchOk, 'body' | 'contentType' | 'html' | 'finalUrl' | 'status' | 'headers'>;
  /** Crawls with track_changes: the page against its URL's previous version. */
  change?: ResultChange;
}

export interface PageRunner {
  fetcher: PageFetcher;
  crawlLimit: Semaphore;
  retryAfterMaxMs: number;
  /** Whether the crawl has ended (checked before each page starts). */
  ended(): Promise<boolean>;
  signal?: AbortSignal;
  /** The crawl's account (see `PageFetchRequest.reuseKey`). */
  reuseKey?: string;
  /** Skip what the site's robots.txt disallows. */
  respectRobots?: boolean;
  /** How pages that are documents are treated (absent: as any other answer). */
  documents?: CrawlDocuments;
  heartbeat(): void;
}

const MAX_RETRY_AFTER_TRIES = 2;

export async function fetchPage(runner: PageRunner, item: WorkItem, bill: SliceBill, keepHtml: boolean, keepPage = false): Promise<PageOutcome> {
  const target = item.fetch ?? item.url;
  for (let attempt = 0; ; attempt++) {
    if (attempt > 0 && (await runner.ended())) return { status: 'pending', credits: 0 };
    const leaveCrawl = await runner.crawlLimit.acquire();
    let reserved = 0;
    const afford = async (credits: number): Promise<boolean> => {
      if (credits <= reserved) return true;
      const ok = await bill.need(credits - reserved);
      if (ok) reserved = credits;
      return ok;
    };
    let outcome;
    try {
      outcome = await runner.fetcher.fetch({
        url: target,
        ...(runner.signal ? { signal: runner.signal } : {}),
        ...(runner.reuseKey !== undefined ? { reuseKey: runner.reuseKey } : {}),
        ...(runner.respectRobots ? { respectRobots: true } : {}),
        afford,
      });
    } finally {
      leaveCrawl();
    }
    runner.heartbeat();
    if (!outcome.ok) {
      bill.giveBack(reserved);
      if (outcome.robots) return { status: 'skipped', credits: 0, detail: outcome.detail };
      // A page the account cannot pay for is not fetched at all.
      return outcome.vetoed ? { status: 'pending', credits: 0, detail: outcome.detail, refused: true } : { status: 'failed', credits: 0, detail: outcome.detail, ...(outcome.kind ? { errorKind: outcome.kind } : {}) };
    }
    const wait = retryAfterMs(outcome.status, outcome.headers);
    // The host gate has paused the host for every job; the page is tried again after the pause.
    if (wait !== undefined && wait <= runner.retryAfterMaxMs && attempt < MAX_RETRY_AFTER_TRIES) {
      bill.giveBack(reserved);
      continue;
    }
    const { billable, failed } = billingOf(outcome.status);
    const answered = { httpStatus: outcome.status, finalUrl: outcome.finalUrl, ...(outcome.contentType ? { contentType: outcome.contentType } : {}) };
    // Documents (documents.ts): skipped or failed unbilled, kept converted and priced by their pages.
    const document = !failed && runner.documents ? await crawlDocument(runner.documents, outcome, keepHtml) : null;
    if (document?.kind === 'skipped' || document?.kind === 'failed') {
      bill.giveBack(reserved);
      return { status: document.kind === 'skipped' ? 'skipped_document' : 'failed', credits: 0, ...answered, detail: document.detail };
    }
    const surcharge = document?.kind === 'kept' ? document.surcharge : 0;
    if (surcharge > 0 && !(await afford(outcome.credits + surcharge))) {
      bill.giveBack(reserved);
      return { status: 'pending', credits: 0, detail: 'The account cannot pay for the document\'s pages.', refused: true };
    }
    const credits = billable ? outcome.credits + surcharge : 0;
    bill.giveBack(reserved - credits);
    const result: PageOutcome = { status: failed ? 'failed' : 'fetched', credits, ...answered };
    if (failed) return { ...result, detail: `The page answered ${outcome.status}.` };
    if (document?.kind === 'kept') return { ...result, html: document.text, document: document.format };
    if (document) return result;
    const html = isHtml({ ...(outcome.contentType ? { contentType: outcome.contentType } : {}), body: outcome.body, rendered: outcome.html !== undefined });
    // Text answers are kept too (output_format); only HTML is read for links.
    const text = outcome.html ?? (html || /^text\//i.test(outcome.contentType ?? '') ? decodeHtml(outcome.body, outcome.contentType) : undefined);
    if (text !== undefined && html && item.open) {
      result.links = extractLinks(text, outcome.finalUrl);
    }
    if (keepHtml && text !== undefined) result.html = text;
    if (keepPage) {
      const { body, contentType, html: rendered, finalUrl, status, headers } = outcome;
      result.page = { body, ...(contentType ? { contentType } : {}), ...(rendered !== undefined ? { html: rendered } : {}), finalUrl, status, headers };
    }
    return result;
  }
}

/** Runs `work` over `items` with at most `limit` at once, in order of start; stops starting when `stop()` says so. */
export async function forEachLimited<T>(items: T[], limit: number, stop: () => Promise<boolean>, work: (item: T, index: number) => Promise<void>): Promise<number> {
  let next = 0;
  let started = 0;
  let halted = false;
  const lane = async (): Promise<void> => {
    while (!halted) {
      const index = next++;
      if (index >= items.length) return;
      if (await stop()) {
        halted = true;
        return;
      }
      started++;
      await work(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  return started;
}
