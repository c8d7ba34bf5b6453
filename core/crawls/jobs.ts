/** How the active-job slots tell that a crawl no longer runs (its slot was not freed: a crash). */
import type { Db } from 'mongodb';
import type { JobChecker } from '../jobs/active-jobs';
import { CrawlEnds } from './ends';
import { crawlCollections } from './store';

/** A slot taken this recently may belong to a crawl whose document is still being written. */
const CREATION_GRACE_MS = 60_000;

export function crawlJobChecker(db: Db, now: () => number = Date.now): JobChecker {
  const { crawls } = crawlCollections(db);
  const ends = new CrawlEnds(db);
  return async (job) => {
    if (await ends.exists(job._id)) return false;
    if (now() - job.created_at.getTime() < CREATION_GRACE_MS) return true;
    return (await crawls.findOne({ _id: job._id }, { projection: { _id: 1 } })) !== null;
  };
}
