/**
 * A run as callers see it: its record (written by the run's activities) joined with its control
 * document (written by the API: pause, stop, delete). A deleted run reads as `deleted`, and a stopped
 * one as `stopped`, from the moment the API records it (no task starts after), although its record
 * only says so once the tasks in flight have finished.
 */
import type { Filter } from 'mongodb';
import type { BatchStore, RunControlDoc, RunDoc, RunStatus } from '../store';

export interface RunView {
  run: RunDoc;
  control: RunControlDoc | null;
}

export const runStatusOf = (view: RunView): RunStatus => view.control?.stop ?? view.run.status;
export const isDeleted = (view: RunView): boolean => runStatusOf(view) === 'deleted';

export function createRunReader(store: BatchStore) {
  const { runs, controls } = store;

  const join = async (docs: RunDoc[]): Promise<RunView[]> => {
    if (docs.length === 0) return [];
    const found = await controls.find({ _id: { $in: docs.map((run) => run._id) } }).toArray();
    const byId = new Map(found.map((control) => [control._id, control]));
    return docs.map((run) => ({ run, control: byId.get(run._id) ?? null }));
  };

  return {
    async one(filter: Filter<RunDoc>): Promise<RunView | null> {
      const run = await runs.findOne(filter);
      return run ? ((await join([run]))[0] ?? null) : null;
    },

    async byIds(runIds: string[]): Promise<Map<string, RunView>> {
      const views = await join(runIds.length > 0 ? await runs.find({ _id: { $in: runIds } }).toArray() : []);
      return new Map(views.map((view) => [view.run._id, view]));
    },

    /** Up to `limit` of a job's runs, newest first, before run sequence `before`; deleted runs are left out. */
    async ofJob(jobId: string, before: number, limit: number): Promise<RunView[]> {
      const found: RunView[] = [];
      let from = before;
      for (let round = 0; round < 100 && found.length < limit; round++) {
        const docs = await runs.find({ job_id: jobId, run_sequence: { $lt: from } }).sort({ run_sequence: -1 }).limit(limit).toArray();
        found.push(...(await join(docs)).filter((view) => !isDeleted(view)));
        const last = docs[docs.length - 1];
        if (!last || docs.length < limit) break;
        from = last.run_sequence;
      }
      return found.slice(0, limit);
    },

    /** Records what the API asks of a run; the caller then signals its workflow. */
    async control(run: RunDoc, change: Partial<Pick<RunControlDoc, 'pause_state' | 'stop'>>): Promise<RunControlDoc> {
      const current = await controls.findOne({ _id: run._id });
      const next: RunControlDoc = {
        _id: run._id,
        job_id: run.job_id,
        pause_state: change.pause_state ?? current?.pause_state ?? 'active',
        // A delete outranks a stop; neither is taken back.
        stop: current?.stop === 'deleted' ? 'deleted' : (change.stop ?? current?.stop ?? null),
        updated_at: new Date(),
      };
      await controls.replaceOne({ _id: run._id }, next, { upsert: true });
      return next;
    },
  };
}

export type RunReader = ReturnType<typeof createRunReader>;
