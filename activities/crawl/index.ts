/** The crawl activities, built once per worker with their dependencies. */
import { ActiveJobs } from '../../core/jobs/active-jobs';
import { crawlCharges } from '../../core/crawls/charges';
import { CrawlEnds } from '../../core/crawls/ends';
import { crawlJobChecker } from '../../core/crawls/jobs';
import type { SliceInput, SliceResult } from '../../core/crawls/types';
import type { ActivityDeps } from '../deps';
import { publishCrawl, type PublishInput, type PublishResult } from './publish';
import { CrawlRuntime } from './runtime';
import { runSlice } from './slice';

export type { PageFetcher, PageFetch, PageFetchRequest } from './fetcher';
export { autoPageFetcher } from './fetcher';

export { CrawlRuntime } from './runtime';

/** The worker's crawl machinery (fetcher, limits, caches), shared by crawls and Extract's discovery. */
export function createCrawlRuntime(deps: ActivityDeps): CrawlRuntime {
  return new CrawlRuntime({
    db: deps.db,
    fetcher: deps.pageFetcher,
    retryAfterMaxMs: deps.config.crawlRetryAfterMaxMs,
  });
}

export function crawlActivities(deps: ActivityDeps, runtime: CrawlRuntime = createCrawlRuntime(deps)) {
  const charges = crawlCharges(deps.db, deps.accounts);
  const activeJobs = new ActiveJobs(deps.db, { crawl: crawlJobChecker(deps.db) });
  const ends = new CrawlEnds(deps.db);
  return {
    /** Fetches one slice of a crawl's pages and stores what it found (idempotent per slice). */
    async crawlSlice(input: SliceInput): Promise<SliceResult> {
      return runSlice({ db: deps.db, accounts: deps.accounts, charges, runtime }, input);
    },
    /** Writes a crawl's progress, results and end (the workflow calls it one at a time per crawl). */
    async publishCrawl(input: PublishInput): Promise<PublishResult> {
      return publishCrawl({ db: deps.db, ends, activeJobs, runtime }, input);
    },
  };
}
