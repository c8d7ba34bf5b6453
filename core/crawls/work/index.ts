/**
 * A crawl's work in the worker: its slices (slice.ts: fetch pages, claim links, store outcomes and
 * bills) and the workflow's single writer of its documents (publish.ts), over the worker's crawl
 * machinery (runtime.ts), which Extract's preparation shares. Built once per worker; the activities
 * (activities/crawl) only call it.
 */
import type { Db } from 'mongodb';
import type { DocumentPool } from '../../../engine';
import type { Accounts } from '../../accounts';
import type { HtmlOutputs } from '../../../engine';
import { ActiveJobs } from '../../jobs/active-jobs';
import type { WorkContext } from '../../jobs/work';
import { crawlCharges } from '../charges';
import { CrawlEnds } from '../ends';
import { CrawlChanges } from '../../changes/crawls';
import { crawlJobChecker } from '../jobs';
import type { SliceInput, SliceResult } from '../types';
import type { PageFetcher } from './fetcher';
import { failCrawl, type FailCrawlInput } from './fail';
import { publishCrawl, type PublishInput, type PublishResult } from './publish';
import { CrawlRuntime } from './runtime';
import { runSlice } from './slice';
import type { CrawlAnnouncer } from './webhooks';

export { autoPageFetcher, type PageFetch, type PageFetcher, type PageFetchRequest } from './fetcher';
export { CrawlRuntime } from './runtime';
export { crawlAnnouncer, type CrawlAnnouncer } from './webhooks';
export type { PublishInput, PublishResult } from './publish';
export type { FailCrawlInput } from './fail';

export function createCrawlWork(deps: { db: Db; accounts: Accounts; html: HtmlOutputs; fetcher: PageFetcher; retryAfterMaxMs: number; documents?: DocumentPool; announcer?: CrawlAnnouncer }) {
  const runtime = new CrawlRuntime({ db: deps.db, fetcher: deps.fetcher, retryAfterMaxMs: deps.retryAfterMaxMs, ...(deps.documents ? { documents: deps.documents } : {}) });
  const charges = crawlCharges(deps.db, deps.accounts);
  const activeJobs = new ActiveJobs(deps.db, { crawl: crawlJobChecker(deps.db) });
  const ends = new CrawlEnds(deps.db);
  const changes = new CrawlChanges(deps.db, deps.html);
  return {
    runtime,
    /** Fetches one slice of a crawl's pages and stores what it found (idempotent per slice). */
    slice: (input: SliceInput, work: WorkContext): Promise<SliceResult> => runSlice({ db: deps.db, accounts: deps.accounts, charges, runtime, changes, ...(deps.announcer ? { announcer: deps.announcer } : {}) }, input, work),
    /** Writes a crawl's progress, results and end (the workflow calls it one at a time per crawl). */
    publish: (input: PublishInput): Promise<PublishResult> => publishCrawl({ db: deps.db, ends, activeJobs, runtime, changes, ...(deps.announcer ? { announcer: deps.announcer } : {}) }, input),
    /** Ends and settles a crawl whose workflow gave up, and tells its end (idempotent). */
    fail: (input: FailCrawlInput): Promise<void> => failCrawl({ db: deps.db, ends, activeJobs, runtime, ...(deps.announcer ? { announcer: deps.announcer } : {}) }, input),
  };
}

export type CrawlWork = ReturnType<typeof createCrawlWork>;
