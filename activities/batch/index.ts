/** The Batch activities, built once per worker with their dependencies. */
import { Context } from '@temporalio/activity';
import { activityFailure } from '../failures';
import { isAccountsError, refusalError, type Principal } from '../../core/accounts';
import type { RunEndInput, ScheduledFire, SliceInput, SliceSummary } from '../../core/batch/run-types';
import { createJobSchedules } from '../../core/batch/schedules';
import { batchCollections, type JobDoc, type RunControlDoc, type RunDoc, type RunStats, type RunStatus } from '../../core/batch/store';
import { checkpointOf, writeExport } from '../../core/batch/exports';
import { clearRefusal, isNewRefusal, noteRefusal } from '../../core/batch/fire-refusals';
import { batchJobChecker, isTerminal, newRunRecord, runInputOf } from '../../core/batch/run-records';
import { endBatchRun, pricedStats, type BatchRunEnd, type RunEndFollow } from '../../core/batch/run-end';
import { JobMissing } from '../../core/jobs/end';
import { insertIgnoringDuplicates } from '../../base/db';
import { derivedId } from '../../base/ids';
import { webhookRetry } from '../../core/webhooks/deliveries';
import { batchCharges } from '../../core/batch/charges';
import { ActiveJobs } from '../../core/jobs/active-jobs';
import { createWebhookEvents } from '../../core/webhooks/events';
import { RunLimits } from '../../core/jobs/run-limits';
import { Semaphore } from '../../base/semaphore';
import type { ActivityDeps } from '../deps';
import { TASK_RETRY } from '../../core/jobs/retry-rules';
import { runBatchSlice, type RunControl } from './slice';

const TERMINAL: RunStatus[] = ['completed', 'failed', 'stopped', 'deleted'];
/** How long a run's record (whether it has ended) is trusted before it is read again. */
const CONTROL_CHECK_MS = 1_000;

export function batchActivities(deps: ActivityDeps) {
  const collections = batchCollections(deps.db);
  const charges = batchCharges(deps.db, deps.accounts);
  const activeJobs = new ActiveJobs(deps.db, { batch: batchJobChecker(deps.db) });
  const events = createWebhookEvents(deps.db);
  const schedules = createJobSchedules(deps.temporal, deps.config.temporalTaskQueue);
  const workerLimit = new Semaphore(deps.config.batchConcurrency);
  // Each run's window in this worker: its slices in flight share it.
  const runLimits = new RunLimits();
  const runLimit = (runId: string, concurrency: number) => runLimits.take(runId, concurrency);
  const ended = new Map<string, { at: number; ended: boolean }>();
  // Lanes that ask while a read of the run's control document is under way share that read.
  const reading = new Map<string, Promise<RunControlDoc | null>>();
  const controlOf = (runId: string): Promise<RunControlDoc | null> => {
    let read = reading.get(runId);
    if (!read) {
      read = collections.controls.findOne({ _id: runId }).finally(() => reading.delete(runId));
      reading.set(runId, read);
    }
    return read;
  };
  /**
   * What a run asks of its slices before each task: go on, hold (paused) or stop (stopped, deleted or
   * ended). The control document is read for every task (a read under way is shared), so no task
   * starts after a stop was answered; the record (which ends only by the run itself) is trusted for
   * CONTROL_CHECK_MS.
   */
  const runControl = async (runId: string): Promise<RunControl> => {
    const cached = ended.get(runId);
    const [run, asked] = await Promise.all([
      cached && Date.now() - cached.at < CONTROL_CHECK_MS ? cached : collections.runs.findOne({ _id: runId }, { projection: { status: 1 } }).then((doc) => ({ at: Date.now(), ended: !doc || TERMINAL.includes(doc.status) })),
      controlOf(runId),
    ]);
    ended.set(runId, run);
    if (ended.size > 1_000) ended.delete(ended.keys().next().value as string);
    return run.ended || asked?.stop ? 'stop' : asked?.pause_state === 'paused' ? 'pause' : 'go';
  };

  const priced = pricedStats(deps.accounts);
  /** A run's end through the job-end routine: written once, its slot freed, its webhook event (if any) answered for delivery. */
  const endRun = async (runId: string, end: BatchRunEnd): Promise<RunEndFollow> =>
    (await endBatchRun({ db: deps.db, activeJobs, priced, events }, runId, end)).follow ?? {};

  /** The job's pointer to its newest run, its run count and when its schedule fires next. */
  const noteFire = async (job: JobDoc, run: RunDoc): Promise<void> => {
    const next = job.schedule ? await schedules.nextFire(job._id, job.schedule).catch(() => job.next_scheduled_run) : null;
    const set = { latest_run_id: run._id, run_count: Math.max(job.run_count, run.run_sequence), next_scheduled_run: next, updated_at: new Date() };
    // The API may write this job at the same moment (a webhook, a schedule); on a store whose updates
    // are read-modify-write one of the two can be lost, so the pointer is checked and written again.
    for (let attempt = 0; attempt < 3; attempt++) {
      await collections.jobs.updateOne({ _id: job._id, run_count: { $lte: run.run_sequence } }, { $set: set });
      const now = await collections.jobs.findOne({ _id: job._id }, { projection: { run_count: 1 } });
      if (!now || now.run_count >= run.run_sequence) return;
    }
  };

  /** A fire the account cannot run: recorded as a failed run, so its webhook and its reader learn why. */
  const failFire = async (job: JobDoc, earlier: RunDoc | null, runId: string, failure: { reason: string; detail: string }): Promise<ScheduledFire> => {
    // The same refusal as the last fire's writes nothing: one record per change of state.
    if (!earlier && !isNewRefusal(job, failure.reason)) return { kind: 'skipped', reason: `Refused again: ${failure.detail}` };
    const run = earlier ?? newRunRecord(job, job.key_id, runId, 'scheduled');
    if (!earlier) await insertIgnoringDuplicates(collections.runs, [run]);
    await noteFire(job, run);
    if (!earlier) await noteRefusal(deps.db, job._id, failure.reason);
    // A run that had ended keeps its end: the routine answers its event again.
    const ended = await endRun(run._id, { status: 'failed', failure });
    return { kind: 'ended', ...ended, webhookRetry: webhookRetry(deps.config) };
  };

  return {
    /** Fetches one slice of a run's tasks and stores their results and bill (idempotent per slice). */
    async batchSlice(input: SliceInput): Promise<SliceSummary> {
      const run = runLimit(input.runId, input.concurrency);
      try {
        return await runBatchSlice(
          {
            db: deps.db,
            accounts: deps.accounts,
            charges,
            runTask: deps.runTask,
            limits: [run.limit, workerLimit],
            taskRetry: { ...TASK_RETRY, maximumAttempts: deps.config.batchTaskAttempts },
            runControl,
          },
          input,
        );
      } finally {
        run.done();
      }
    },

    /** Writes a run's progress (running, stats, slices started) unless the run has ended; a pause is the control's, not the status's. */
    async batchRunProgress(input: { runId: string; stats: RunStats; nextSlice: number }): Promise<void> {
      const run = await collections.runs.findOne({ _id: input.runId });
      if (!run || TERMINAL.includes(run.status)) return;
      const stats = await priced(run, input.stats);
      await collections.runs.updateOne(
        { _id: input.runId, status: { $nin: TERMINAL } },
        { $set: { status: 'running', stats, next_slice: input.nextSlice, updated_at: new Date() } },
      );
    },

    /**
     * Records a run's end, frees its active-job slot and, when the job has a webhook, writes the end
     * event once (core/batch/run-end.ts); the workflow then starts its delivery.
     */
    async batchRunEnd(input: RunEndInput): Promise<RunEndFollow> {
      const { runId, ...end } = input;
      try {
        return await endRun(runId, end);
      } catch (error) {
        if (error instanceof JobMissing) throw activityFailure('run_missing', `run ${runId} does not exist`);
        throw error;
      }
    },

    /**
     * One fire of a scheduled job's Temporal Schedule: a run of the job's tasks with trigger
     * `scheduled`, or, when the account cannot run it (no credits, every active-job slot taken, its
     * key gone), a run recorded as failed whose webhook says why. Safe to repeat: the run's id is
     * derived from the fire's workflow id.
     */
    async batchScheduledFire(input: { jobId: string; fireId: string }): Promise<ScheduledFire> {
      const job = await collections.jobs.findOne({ _id: input.jobId });
      if (!job || job.status === 'deleted' || job.type !== 'scheduled') return { kind: 'skipped', reason: 'The job no longer exists.' };
      const runId = derivedId('run', input.fireId);
      const earlier = await collections.runs.findOne({ _id: runId });
      let principal: Principal;
      try {
        principal = await deps.accounts.principalFor(job.account_id, job.key_id);
      } catch (error) {
        if (!isAccountsError(error)) throw error;
        return failFire(job, earlier, runId, { reason: 'subscription_inactive', detail: `The job's account or API key can no longer run jobs: ${error.message}` });
      }
      if (!earlier || earlier.status === 'pending') {
        if (!earlier) {
          const probe = await deps.accounts.charging.tryReserve(principal, 1);
          if ('refused' in probe) {
            const reason = probe.refused === 'key_cap' ? 'api_key_cap_reached' : 'insufficient_credits';
            return failFire(job, earlier, runId, { reason, detail: refusalError(probe.refused, 'batch', principal).detail });
          }
          await probe.release();
        }
        const grant = await activeJobs.acquire(job.account_id, principal.plan.activeJobs, { id: runId, kind: 'batch' });
        if (!grant.ok) {
          return failFire(job, earlier, runId, { reason: 'quota_exceeded', detail: `The account already ran its ${principal.plan.activeJobs} active jobs (Crawl and Batch together) when the schedule fired.` });
        }
      }
      const run = earlier ?? newRunRecord(job, job.key_id, runId, 'scheduled');
      if (!earlier) await insertIgnoringDuplicates(collections.runs, [run]);
      await noteFire(job, run);
      await clearRefusal(deps.db, job);
      if (isTerminal(run.status)) return { kind: 'ended', ...(await endRun(run._id, { status: run.status as BatchRunEnd['status'] })), webhookRetry: webhookRetry(deps.config) };
      return { kind: 'run', input: runInputOf(run, job, principal, deps.config), jobId: job._id, accountId: job.account_id };
    },

    /** Writes an export's file (NDJSON or CSV of every task of the run, bodies included). */
    async batchExport(exportId: string): Promise<void> {
      // Each chunk written is a heartbeat carrying where the writer stands: a retry (a killed worker's
      // export taken up elsewhere) resumes from there instead of from the first chunk.
      const context = Context.current();
      await writeExport(deps.db, exportId, {
        resume: checkpointOf(context.info.heartbeatDetails),
        progress: (checkpoint) => context.heartbeat(checkpoint),
        signal: context.cancellationSignal,
        chunkBytes: deps.config.batchExportChunkBytes,
        retentionDays: deps.config.resultsRetentionDays,
      });
    },
  };
}
