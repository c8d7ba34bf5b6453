/**
 * "The crawl has ended", written and read in one place. The end is one insert into `crawl_ends`
 * (the job-end routine's claim by a unique key, core/jobs/end.ts): the stop call and the workflow race,
 * the first insert wins, and every later attempt gets the winner.
 * Slices, the active-job check and the readers only ask whether it exists or what it says.
 */
import type { Collection, Db } from 'mongodb';
import type { ActiveJobs } from '../jobs/active-jobs';
import { claimByInsert, endJob, type Claimed, type JobEndSurface } from '../jobs/end';
import { crawlCollections, type CrawlEndDoc } from './store';
import type { CrawlEnd } from './types';

export class CrawlEnds {
  private readonly ends: Collection<CrawlEndDoc>;

  constructor(db: Db) {
    this.ends = crawlCollections(db).ends;
  }

  /** The job-end claim of a crawl: one insert into `crawl_ends`, the first wins. */
  claim(crawlId: string, end: CrawlEnd, now: Date): Promise<Claimed<CrawlEndDoc>> {
    return claimByInsert(this.ends, { _id: crawlId, ...end, finished_at: now });
  }

  read(crawlId: string): Promise<CrawlEndDoc | null> {
    return this.ends.findOne({ _id: crawlId });
  }

  async exists(crawlId: string): Promise<boolean> {
    return (await this.ends.findOne({ _id: crawlId }, { projection: { _id: 1 } })) !== null;
  }
}

/** A crawl's end for the job-end routine (core/jobs/end.ts): its `crawl_ends` record and its active-job slot. */
export function crawlEndSurface(deps: { ends: CrawlEnds; activeJobs: Pick<ActiveJobs, 'release'> }): JobEndSurface<CrawlEnd, CrawlEndDoc, never> {
  return {
    claim: (crawlId, end, at) => deps.ends.claim(crawlId, end, at),
    release: (crawlId) => deps.activeJobs.release(crawlId),
  };
}

/**
 * Ends a crawl: records its end (or finds the one recorded first) and gives back its active-job slot.
 * Both the stop call and the workflow's publish end crawls through here.
 */
export async function recordEnd(deps: { ends: CrawlEnds; activeJobs: Pick<ActiveJobs, 'release'> }, crawlId: string, end: CrawlEnd): Promise<CrawlEndDoc> {
  return (await endJob(crawlEndSurface(deps), crawlId, end)).record;
}
