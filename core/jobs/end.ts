/**
 * A job's end, one routine for every surface (crawls, Batch runs, Extract preparations):
 *
 *   endJob ─> claim (terminal state, end time, outcome, final stats: written once, the first writer wins)
 *          ─> release (what the running job held: an active-job slot, a preparation slot)
 *          ─> follow (what an end sets off: the webhook event the workflow then delivers)
 *
 * Each surface keeps its own stored shape behind a small adapter (core/crawls/ends.ts,
 * core/batch/runs/end.ts, core/extract/ends.ts). Release and follow run on every call, also when an end
 * was recorded before: both are idempotent, so a retried end (a worker lost after the claim) and the
 * loser of a race still give back the slot and answer the same event.
 *
 * FerretDB has no transactions and its updates are read-modify-write, so a claim is either an insert
 * of a unique key (where two writers race: a crawl's stop call and its workflow) or a conditional
 * update on a non-terminal state followed by a read back: the end that stands is the one answered.
 */
import type { Collection, Filter, OptionalUnlessRequiredId, UpdateFilter } from 'mongodb';
import { isDuplicateKey } from '../../base/db';

/** The end that stands, and whether this call wrote it. */
export interface Claimed<R> {
  won: boolean;
  record: R;
}

export interface JobEndSurface<E, R, F> {
  /** Writes `end` as the job's terminal state unless one is written; answers the end that stands (null: no such job). */
  claim(jobId: string, end: E, at: Date): Promise<Claimed<R> | null>;
  /** Gives back what the running job held, as the standing end says. Idempotent. */
  release(jobId: string, record: R, end: E): Promise<void>;
  /** What follows the standing end (written once; answered again on every call). */
  follow?(record: R): Promise<F>;
}

export interface JobEnded<R, F> extends Claimed<R> {
  /** The follow-up of the end (a webhook event to deliver), when the surface has one. */
  follow?: F;
}

/** The job does not exist: there is nothing to end. */
export class JobMissing extends Error {
  constructor(readonly jobId: string) {
    super(`job ${jobId} does not exist`);
  }
}

/** Ends a job: the terminal state once, then what the job held is given back, then what follows an end. */
export async function endJob<E, R, F>(surface: JobEndSurface<E, R, F>, jobId: string, end: E, at: Date = new Date()): Promise<JobEnded<R, F>> {
  const claimed = await surface.claim(jobId, end, at);
  if (!claimed) throw new JobMissing(jobId);
  await surface.release(jobId, claimed.record, end);
  if (!surface.follow) return claimed;
  return { ...claimed, follow: await surface.follow(claimed.record) };
}

/** A claim by a unique key: the insert wins, a duplicate reads the winner. */
export async function claimByInsert<D extends { _id: string }>(collection: Collection<D>, record: D): Promise<Claimed<D>> {
  try {
    await collection.insertOne(record as OptionalUnlessRequiredId<D>);
    return { won: true, record };
  } catch (error) {
    if (!isDuplicateKey(error)) throw error;
    const existing = await collection.findOne({ _id: record._id } as Filter<D>);
    if (!existing) throw error;
    return { won: false, record: existing as D };
  }
}

/**
 * A claim by a conditional update of the job's record while it is in a non-terminal state (`open`),
 * then a read back: `ours` tells whether the end that stands is the one written here.
 */
export async function claimByUpdate<D extends { _id: string }>(
  collection: Collection<D>,
  jobId: string,
  open: Filter<D>,
  update: UpdateFilter<D>,
  ours: (record: D) => boolean,
): Promise<Claimed<D> | null> {
  await collection.updateOne({ ...open, _id: jobId } as Filter<D>, update);
  const record = (await collection.findOne({ _id: jobId } as Filter<D>)) as D | null;
  return record ? { won: ours(record), record } : null;
}

