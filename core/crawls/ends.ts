/**
 * "The crawl has ended", written and read in one place. The end is one insert into `crawl_ends`:
 * the stop call and the workflow race, the first insert wins, and every later attempt gets the winner.
 * Slices, the active-job check and the readers only ask whether it exists or what it says.
 */
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from '../db';
import type { ActiveJobs } from '../jobs/active-jobs';
import { crawlCollections, type CrawlEndDoc } from './store';
import type { CrawlEnd } from './types';

export type RecordedEnd = { won: boolean; end: CrawlEndDoc };

export class CrawlEnds {
  private readonly ends: Collection<CrawlEndDoc>;

  constructor(db: Db) {
    this.ends = crawlCollections(db).ends;
  }

  /** Records `end` unless an end is recorded already; answers the recorded one and whether it is ours. */
  async record(crawlId: string, end: CrawlEnd, now: Date = new Date()): Promise<RecordedEnd> {
    const record: CrawlEndDoc = { _id: crawlId, ...end, finished_at: now };
    try {
      await this.ends.insertOne(record);
      return { won: true, end: record };
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      const existing = await this.ends.findOne({ _id: crawlId });
      if (!existing) throw error;
      return { won: false, end: existing };
    }
  }

  read(crawlId: string): Promise<CrawlEndDoc | null> {
    return this.ends.findOne({ _id: crawlId });
  }

  async exists(crawlId: string): Promise<boolean> {
    return (await this.ends.findOne({ _id: crawlId }, { projection: { _id: 1 } })) !== null;
  }
}

/**
 * Ends a crawl: records its end (or finds the one recorded first) and gives back its active-job slot.
 * Both the stop call and the workflow's publish end crawls through here.
 */
export async function recordEnd(deps: { ends: CrawlEnds; activeJobs: ActiveJobs }, crawlId: string, end: CrawlEnd): Promise<CrawlEndDoc> {
  const recorded = await deps.ends.record(crawlId, end);
  await deps.activeJobs.release(crawlId);
  return recorded.end;
}
