/**
 * Batch runs in the account's active-job slots (core/jobs/active-jobs.ts): a slot whose run has ended
 * without freeing it (a crash) is reclaimed when the account is full.
 */
import { ActiveJobs } from '../../jobs/active-jobs';
import type { BatchStore } from '../store';
import { isTerminal } from './records';

/** How an active-job slot tells that a Batch run no longer runs (its slot was not freed: a crash). */
export function batchJobChecker(store: BatchStore): (job: { _id: string; created_at: Date }) => Promise<boolean> {
  return async (job) => {
    const run = await store.runs.findOne({ _id: job._id }, { projection: { status: 1 } });
    if (!run) return Date.now() - job.created_at.getTime() < 60_000;
    return !isTerminal(run.status);
  };
}

/** The active-job slots as Batch takes them, its runs' ends told by their records. */
export const batchActiveJobs = (store: BatchStore): ActiveJobs => new ActiveJobs(store.db, { batch: batchJobChecker(store) });
