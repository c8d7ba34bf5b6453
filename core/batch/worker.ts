/**
 * Batch's work in the worker process: what the run, fire and export workflows ask of their activities,
 * built once per worker from its database (one Batch store) and handed to activities/batch, which only
 * pass each call through, with the attempt that runs it, and turn a Batch failure (errors.ts) into
 * their Temporal failure.
 *
 *   slice     one slice part of a run (runs/slice/run-slice.ts), under the run's leases (shared by every
 *             worker, core/jobs/run-leases.ts) and the worker's limit
 *   progress  a run's progress on its record (runs/progress.ts)
 *   end       a run's end and its webhook event (runs/end.ts)
 *   fire      one fire of a scheduled job (schedules/fire.ts)
 *   export    an export's file (exports/write.ts)
 */
import type { Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import type { Accounts } from '../accounts';
import type { Config } from '../../base/config';
import { Semaphore } from '../../base/semaphore';
import { TASK_RETRY } from '../jobs/retry-rules';
import { RunLeases } from '../jobs/run-leases';
import { createWebhookEvents } from '../webhooks/events';
import type { WorkContext } from '../jobs/work';
import { checkpointOf, writeExport } from './exports/write';
import type { RunEndInput, ScheduledFire, SliceInput, SliceSummary } from './run-types';
import { batchCharges } from './runs/charges';
import { endBatchRun, endRecordedRun, pricedStats, type BatchRunEnd, type RunEndFollow } from './runs/end';
import { writeRunProgress, type RunProgress } from './runs/progress';
import { RunControls } from './runs/run-control';
import { runSlice } from './runs/slice/run-slice';
import { batchActiveJobs } from './runs/slots';
import { scheduledFires } from './schedules/fire';
import { createJobSchedules } from './schedules/temporal';
import { BatchStore } from './store';
import type { TaskRunner } from './task-runner';

export interface BatchWorkerDeps {
  db: Db;
  accounts: Accounts;
  /** A Temporal client, for what the fires read of Temporal itself (when a schedule fires next). */
  temporal: Client;
  config: Pick<
    Config,
    | 'temporalTaskQueue'
    | 'batchConcurrency'
    | 'batchTaskAttempts'
    | 'batchExportChunkBytes'
    | 'batchSlicesInFlight'
    | 'batchHistoryEvents'
    | 'resultsRetentionDays'
    | 'webhookRetryInitialMs'
    | 'webhookRetryMaxIntervalMs'
    | 'webhookRetryHours'
    | 'webhookTimeoutMs'
  >;
  /** How a task is fetched: the Fetch pipeline, with the task's own billing (core/fetch/task.ts). */
  runTask: TaskRunner;
}

export function createBatchWorker(deps: BatchWorkerDeps) {
  const { config } = deps;
  const store = BatchStore.of(deps.db);
  const charges = batchCharges(store, deps.accounts);
  const activeJobs = batchActiveJobs(store);
  const events = createWebhookEvents(store.db);
  const priced = pricedStats(deps.accounts);
  const endDeps = { db: store.db, activeJobs, priced, events };
  const controls = new RunControls(store);
  const workerSlots = new Semaphore(config.batchConcurrency);
  const workerLimit = {
    async acquire(signal?: AbortSignal): Promise<() => void> {
      const turn = await workerSlots.take(signal ? { signal } : {});
      if (!turn.ok) throw new Error(`no worker slot: ${turn.reason}`);
      return turn.release;
    },
  };
  // Each run's leases, shared by every worker: its tasks in flight, wherever they run, stay within its concurrency.
  const runLeases = new RunLeases(deps.db);
  const fire = scheduledFires({
    store,
    accounts: deps.accounts,
    activeJobs,
    schedules: createJobSchedules(deps.temporal, config.temporalTaskQueue),
    config,
    endRun: async (runId: string, end: BatchRunEnd): Promise<RunEndFollow> => (await endBatchRun(endDeps, runId, end)).follow ?? {},
  });

  return {
    /** Fetches one slice part of a run's tasks and stores their results and bill (idempotent per part). */
    async slice(input: SliceInput, attempt: WorkContext): Promise<SliceSummary> {
      const run = runLeases.take(input.runId, input.concurrency);
      try {
        return await runSlice(
          {
            store,
            accounts: deps.accounts,
            charges,
            runTask: deps.runTask,
            // The run's lease first: a task waiting for one holds none of the worker's slots.
            limits: [run, workerLimit],
            taskRetry: { ...TASK_RETRY, maximumAttempts: config.batchTaskAttempts },
            runControl: (runId) => controls.of(runId),
          },
          input,
          attempt,
        );
      } finally {
        run.done();
      }
    },

    /** Writes a run's progress unless the run has ended. */
    progress: (input: RunProgress): Promise<void> => writeRunProgress(store, priced, input),

    /** Records a run's end, frees its active-job slot and, when the job has a webhook, writes its end event once. */
    end: ({ runId, ...end }: RunEndInput): Promise<RunEndFollow> => endRecordedRun(endDeps, runId, end),

    /** One fire of a scheduled job: a run to start, a refusal recorded as a failed run, or nothing. */
    fire: (input: { jobId: string; fireId: string }): Promise<ScheduledFire> => fire(input),

    /**
     * Writes an export's file. Each chunk written is a heartbeat carrying where the writer stands: a retry
     * (a killed worker's export taken up elsewhere) resumes from there instead of from the first chunk.
     */
    export: (exportId: string, attempt: WorkContext): Promise<void> =>
      writeExport(store.db, exportId, {
        resume: checkpointOf(attempt.progress),
        progress: (checkpoint) => attempt.heartbeat(checkpoint),
        signal: attempt.signal,
        chunkBytes: config.batchExportChunkBytes,
        retentionDays: config.resultsRetentionDays,
      }),
  };
}

export type BatchWorker = ReturnType<typeof createBatchWorker>;
