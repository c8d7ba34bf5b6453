/**
 * A scheduled job whose fires the account cannot run (no credits, its active jobs taken, its key
 * gone) would write a failed run and a webhook at every fire: 10 such jobs firing every minute wrote
 * 160 runs in 16 minutes. A refusal is recorded once per change of state instead: the first fire
 * refused for a reason writes its failed run, later fires refused for the same reason write nothing,
 * and a fire that runs (or is refused for another reason) starts the count again.
 *
 * The job's `last_refusal` has a single writer: a job's fires never overlap (the Schedule skips).
 */
import type { BatchStore, JobDoc } from '../store';

/** Whether a fire refused for `reason` is a new state worth a run record. */
export const isNewRefusal = (job: JobDoc, reason: string): boolean => job.last_refusal !== reason;

/** Remembers the refusal just recorded. */
export async function noteRefusal(store: BatchStore, jobId: string, reason: string): Promise<void> {
  await store.jobs.updateOne({ _id: jobId }, { $set: { last_refusal: reason } });
}

/** A fire ran: the next refusal is a change of state again. */
export async function clearRefusal(store: BatchStore, job: JobDoc): Promise<void> {
  if (job.last_refusal) await store.jobs.updateOne({ _id: job._id }, { $set: { last_refusal: null } });
}
