/**
 * What the crawl activities of one worker share: the page fetcher (the host gate is the engine's,
 * shared by the whole installation), each crawl's
 * page limit in this worker, a bounded cache of URLs known to be in each crawl's seen-set (a link in
 * it is a duplicate without asking the database) and a short-lived cache of whether a crawl ended.
 */
import type { Db } from 'mongodb';
import { CrawlEnds } from '../ends';
import type { PageFetcher } from './fetcher';
import { RunLimits, type RunLimit } from '../../jobs/run-limits';
import type { DocumentPool } from '../../../engine';

const ENDED_TTL_MS = 150;
const SEEN_PER_CRAWL = 200_000;
const CRAWLS_CACHED = 32;

export interface CrawlRuntimeOptions {
  db: Db;
  fetcher: PageFetcher;
  retryAfterMaxMs: number;
  /** The worker's document pool: kept pages that are documents are converted in it. */
  documents?: DocumentPool;
}

export class CrawlRuntime {
  readonly fetcher: PageFetcher;
  readonly retryAfterMaxMs: number;
  readonly documents?: DocumentPool;
  private readonly limits = new RunLimits();
  private readonly seenSets = new Map<string, Set<string>>();
  private readonly endChecks = new Map<string, { at: number; ended: Promise<boolean> }>();
  private readonly ends: CrawlEnds;

  constructor(options: CrawlRuntimeOptions) {
    this.fetcher = options.fetcher;
    this.retryAfterMaxMs = options.retryAfterMaxMs;
    if (options.documents) this.documents = options.documents;
    this.ends = new CrawlEnds(options.db);
  }

  /** The crawl's page limit in this worker, shared by its slices running here; call `done` after. */
  crawl(crawlId: string, concurrency: number): RunLimit {
    return this.limits.take(crawlId, concurrency);
  }

  /** Keys known to be in the crawl's seen-set (bounded; forgetting only costs a database insert). */
  seen(crawlId: string): Set<string> {
    let set = this.seenSets.get(crawlId);
    if (set && set.size > SEEN_PER_CRAWL) set.clear();
    if (!set) {
      if (this.seenSets.size >= CRAWLS_CACHED) {
        const oldest = this.seenSets.keys().next().value;
        if (oldest !== undefined) this.seenSets.delete(oldest);
      }
      set = new Set();
    } else {
      this.seenSets.delete(crawlId);
    }
    this.seenSets.set(crawlId, set);
    return set;
  }

  /** Whether the crawl has an end record (stop, limit, failure): then no new page starts. */
  ended(crawlId: string): Promise<boolean> {
    const now = Date.now();
    const cached = this.endChecks.get(crawlId);
    if (cached && now - cached.at < ENDED_TTL_MS) return cached.ended;
    const ended = this.ends.exists(crawlId);
    this.endChecks.set(crawlId, { at: now, ended });
    if (this.endChecks.size > 1_000) {
      for (const [id, check] of this.endChecks) if (now - check.at > ENDED_TTL_MS) this.endChecks.delete(id);
    }
    return ended;
  }

  /** Forgets a finished crawl. */
  forget(crawlId: string): void {
    this.seenSets.delete(crawlId);
    this.endChecks.delete(crawlId);
  }
}
