/**
 * Batch data retention, part of the scheduled sweep (core/retention.ts):
 *
 *   runs that ended before the cutoff, and deleted runs once they ended ─> their records go
 *   deleted jobs without runs left ─> the job and its task slices go
 *   results, exports and bills whose run has no record ─> they go (blobs go with their owner:
 *   core/retention.ts sweeps them last)
 *
 * A run another kept run reruns stays: the rerun reads the bodies it inherited from it. A run's
 * record goes first, so from then on it reads as missing; its other documents are orphans the last
 * step removes, checked against the run records again just before they go.
 */
import type { Db } from 'mongodb';
import { isTerminal } from '../runs/records';
import { ids } from './ids';
import { BatchStore } from './store';

type Removed = Record<string, number>;

const count = (removed: Removed, name: string, n: number): void => {
  if (n > 0) removed[name] = (removed[name] ?? 0) + n;
};

export async function sweepBatch(db: Db, cutoff: Date, batch: number, beat: () => void, removed: Removed): Promise<void> {
  const store = BatchStore.of(db);
  await removeRuns(store, cutoff, batch, beat, removed);
  await removeDeletedJobs(store, batch, beat, removed);
  await removeOrphans(store, batch, beat, removed);
}

/** Run records whose data may go: ended before the cutoff, or deleted (the run, or its job) and ended. */
async function removeRuns(store: BatchStore, cutoff: Date, batch: number, beat: () => void, removed: Removed): Promise<void> {
  const { runs, controls, jobs } = store;
  const deletedJobs = new Set((await jobs.find({ status: 'deleted' }, { projection: { _id: 1 } }).toArray()).map((job) => job._id));
  const deletedRuns = new Set((await controls.find({ stop: 'deleted' }, { projection: { _id: 1 } }).toArray()).map((control) => control._id));
  const candidates: string[] = [];
  for await (const run of runs.find({}, { projection: { _id: 1, job_id: 1, status: 1, ended_at: 1 }, batchSize: batch })) {
    if (!isTerminal(run.status) || !run.ended_at) continue;
    if (run.ended_at < cutoff || run.status === 'deleted' || deletedRuns.has(run._id) || deletedJobs.has(run.job_id)) candidates.push(run._id);
  }
  if (candidates.length === 0) return;
  // A rerun reads the bodies it inherited from the run it reruns: that run stays while the rerun does.
  const going = new Set(candidates);
  for (;;) {
    const readers = await runs.find({ rerun_of: { $in: [...going] } }, { projection: { _id: 1, rerun_of: 1 } }).toArray();
    const kept = readers.filter((reader) => !going.has(reader._id) && reader.rerun_of !== null && going.delete(reader.rerun_of));
    if (kept.length === 0) break;
  }
  const doomed = [...going];
  for (let from = 0; from < doomed.length; from += batch) {
    const part = doomed.slice(from, from + batch);
    count(removed, 'batch_runs', (await runs.deleteMany({ _id: { $in: part } })).deletedCount);
    count(removed, 'batch_run_controls', (await controls.deleteMany({ _id: { $in: part } })).deletedCount);
    beat();
  }
}

/** Deleted jobs with no run record left: the job and its slices (ids computed from its slice count). */
async function removeDeletedJobs(store: BatchStore, batch: number, beat: () => void, removed: Removed): Promise<void> {
  const { jobs, runs, slices } = store;
  for (const job of await jobs.find({ status: 'deleted' }, { projection: { _id: 1, slice_count: 1 } }).toArray()) {
    if (await runs.findOne({ job_id: job._id }, { projection: { _id: 1 } })) continue;
    for (let n = 0; n < job.slice_count; n += batch) {
      const part = Array.from({ length: Math.min(batch, job.slice_count - n) }, (_, index) => ids.slice(job._id, n + index));
      count(removed, 'batch_slices', (await slices.deleteMany({ _id: { $in: part } })).deletedCount);
      beat();
    }
    count(removed, 'batch_jobs', (await jobs.deleteMany({ _id: job._id })).deletedCount);
  }
}

/** Documents whose run has no record any more. */
async function removeOrphans(store: BatchStore, batch: number, beat: () => void, removed: Removed): Promise<void> {
  const living = async (owners: string[]): Promise<Set<string>> => {
    const runs = await store.runs.find({ _id: { $in: [...new Set(owners)] } }, { projection: { _id: 1 } }).toArray();
    return new Set(runs.map((doc) => doc._id));
  };
  const sweepOf = async (name: string, ownerOf: (doc: { _id: unknown; run_id?: unknown }) => string | undefined): Promise<void> => {
    const collection = store.db.collection<{ _id: string; run_id?: string }>(name);
    let pending: Array<{ id: string; owner: string }> = [];
    const flush = async (): Promise<void> => {
      const alive = await living(pending.map((entry) => entry.owner));
      const orphans = pending.filter((entry) => !alive.has(entry.owner)).map((entry) => entry.id);
      if (orphans.length > 0) count(removed, name, (await collection.deleteMany({ _id: { $in: orphans } })).deletedCount);
      pending = [];
      beat();
    };
    for await (const doc of collection.find({}, { projection: { _id: 1, run_id: 1 }, batchSize: batch })) {
      const owner = ownerOf(doc);
      if (typeof doc._id === 'string' && owner) pending.push({ id: doc._id, owner });
      if (pending.length >= batch) await flush();
    }
    if (pending.length > 0) await flush();
  };
  const field = (doc: { run_id?: unknown }): string | undefined => (typeof doc.run_id === 'string' ? doc.run_id : undefined);
  await sweepOf('batch_results', field);
  await sweepOf('batch_exports', field);
  // Bills are keyed `<run_id>|<slice>`.
  await sweepOf('batch_charges', (doc) => (typeof doc._id === 'string' && doc._id.includes('|') ? doc._id.slice(0, doc._id.indexOf('|')) : undefined));
}
