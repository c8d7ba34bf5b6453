/** Crawls bill their slices through the job charges (core/jobs/charges.ts): markers in `crawl_charges`, holds `crawl-…`. */
import type { Db } from 'mongodb';
import type { Accounts } from '../accounts';
import { JobCharges } from '../jobs/charges';
import { crawlCollections } from './store';

export const crawlCharges = (db: Db, accounts: Accounts): JobCharges => new JobCharges(db, accounts, { charges: crawlCollections(db).charges, holdPrefix: 'crawl' });

export { JobCharges as CrawlCharges, sliceHoldId, type SliceBill } from '../jobs/charges';
