/** Batch bills its tasks through the job charges (core/jobs/charges.ts): markers in `batch_charges`, holds `batch-…`. */
import type { Accounts } from '../../accounts';
import { JobCharges } from '../../jobs/charges';
import type { BatchStore } from '../store';

export const batchCharges = (store: BatchStore, accounts: Accounts): JobCharges => new JobCharges(store.db, accounts, { charges: store.charges, holdPrefix: 'batch' });
