/**
 * The Batch activities: each hands its call to the worker's Batch commands (core/batch/worker.ts) with
 * the attempt that runs it (its cancellation, number and heartbeats), and turns a Batch failure into
 * the activity's Temporal failure; everything else they do is core's.
 */
import { Context } from '@temporalio/activity';
import type { WorkAttempt } from '../../core/batch/attempt';
import { isBatchFailure } from '../../core/batch/errors';
import type { RunEndInput, ScheduledFire, SliceInput, SliceSummary } from '../../core/batch/run-types';
import type { RunEndFollow } from '../../core/batch/runs/end';
import type { RunProgress } from '../../core/batch/runs/progress';
import { activityFailure, interruption } from '../failures';
import type { ActivityDeps } from '../deps';

/** The running activity's attempt, as core's long work takes it. */
function currentAttempt(): WorkAttempt {
  const context = Context.current();
  return {
    signal: context.cancellationSignal,
    attempt: context.info.attempt,
    heartbeatDetails: context.info.heartbeatDetails,
    heartbeat: (details) => context.heartbeat(details),
  };
}

/**
 * A Batch failure as the activity's: work cut short gives up as its cancellation (or a retryable
 * `interrupted`), so it runs again and is never stored as done; work that is gone fails for good.
 */
function asActivityFailure(error: unknown, signal?: AbortSignal): unknown {
  if (!isBatchFailure(error)) return error;
  if (error.reason === 'interrupted') return signal ? interruption(signal, error.message) : activityFailure('interrupted', error.message);
  return activityFailure(error.reason, error.message);
}

export function batchActivities(deps: ActivityDeps) {
  const { batch } = deps;
  return {
    /** Fetches one slice of a run's tasks and stores their results and bill (idempotent per slice part). */
    async batchSlice(input: SliceInput): Promise<SliceSummary> {
      const attempt = currentAttempt();
      try {
        return await batch.slice(input, attempt);
      } catch (error) {
        throw asActivityFailure(error, attempt.signal);
      }
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
      try {
        return await batch.end(input);
      } catch (error) {
        throw asActivityFailure(error);
      }
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
      const attempt = currentAttempt();
      try {
        await batch.export(exportId, attempt);
      } catch (error) {
        throw asActivityFailure(error, attempt.signal);
      }
    },
  };
}
