/** Batch bills its tasks through the job charges (core/jobs/charges.ts): markers in `batch_charges`, holds `batch-…`. */
import type { Db } from 'mongodb';
import type { Accounts } from '../accounts';
import { JobCharges } from '../jobs/charges';
import { batchCollections } from './store';

export const batchCharges = (db: Db, accounts: Accounts): JobCharges => new JobCharges(db, accounts, { charges: batchCollections(db).charges, holdPrefix: 'batch' });
