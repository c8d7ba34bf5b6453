/**
 * The Batch activities: each hands its call to the worker's Batch work (core/batch/worker.ts) with the
 * attempt that runs it (`asActivity`: its cancellation, number and heartbeats), which turns a step's
 * `WorkFailure` into the activity's Temporal failure; everything else they do is core's.
 */
import type { RunEndInput, ScheduledFire, SliceInput, SliceSummary } from '../../core/batch/run-types';
import type { RunEndFollow } from '../../core/batch/runs/end';
import type { RunProgress } from '../../core/batch/runs/progress';
import type { ActivityDeps } from '../deps';
import { asActivity } from '../failures';

export function batchActivities(deps: ActivityDeps) {
  const { batch } = deps;
  return {
    /** Fetches one slice of a run's tasks and stores their results and bill (idempotent per slice part). */
    async batchSlice(input: SliceInput): Promise<SliceSummary> {
      return asActivity((work) => batch.slice(input, work));
    },

    /** Writes a run's progress (running, stats, slices started) unless the run has ended; a pause is the control's, not the status's. */
    async batchRunProgress(input: RunProgress): Promise<void> {
      await batch.progress(input);
    },

    /**
     * Records a run's end, frees its active-job slot and, when the job has a webhook, writes the end
     * event once (core/batch/runs/end.ts); the workflow then starts its delivery.
     */
    async batchRunEnd(input: RunEndInput): Promise<RunEndFollow> {
      return asActivity(() => batch.end(input));
    },

    /**
     * One fire of a scheduled job's Temporal Schedule: a run of the job's tasks with trigger
     * `scheduled`, or, when the account cannot run it (no credits, every active-job slot taken, its
     * key gone), a run recorded as failed whose webhook says why (core/batch/schedules/fire.ts).
     */
    async batchScheduledFire(input: { jobId: string; fireId: string }): Promise<ScheduledFire> {
      return batch.fire(input);
    },

    /** Writes an export's file (NDJSON or CSV of every task of the run, bodies included), resuming from its heartbeats. */
    async batchExport(exportId: string): Promise<void> {
      await asActivity((work) => batch.export(exportId, work));
    },
  };
}
