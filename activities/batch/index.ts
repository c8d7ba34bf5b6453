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
import { insertIgnoringDuplicates } from '../../core/db';
import { derivedId } from '../../core/ids';
import { webhookRetry } from '../../core/webhooks/deliveries';
import { batchCharges } from '../../core/batch/charges';
import { ActiveJobs } from '../../core/jobs/active-jobs';
import { createWebhookEvents } from '../../core/webhooks/events';
import { RunLimits } from '../../core/jobs/run-limits';
import { Semaphore } from '../../core/semaphore';
import type { ActivityDeps } from '../deps';
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

  /** Stats with `spend.cost`: the credits at the plan's price per credit. */
  const withCost = async (accountId: string, keyId: string, stats: RunStats): Promise<RunStats> => {
    const { plan } = await deps.accounts.principalFor(accountId, keyId);
    const perCredit = plan.credits > 0 ? plan.price / plan.credits : 0;
    return { ...stats, spend: { credits: stats.spend.credits, cost: Math.round(stats.spend.credits * perCredit * 1e6) / 1e6 } };
  };

  /** Writes a run's end once and frees its slot; answers the webhook event to deliver, if any. */
  const recordEnd = async (run: RunDoc, ended: RunEndInput['status'], rawStats: RunStats, failure?: RunEndInput['failure']): Promise<{ webhook?: { key: string; eventId: string } }> => {
    const stats = await withCost(run.account_id, run.key_id, rawStats);
    const asked = await collections.controls.findOne({ _id: run._id });
    const status = run.status === 'deleted' || asked?.stop === 'deleted' ? 'deleted' : ended;
    const now = new Date();
    const done: RunDoc = { ...run, status, stats, failure_reason: failure?.reason ?? null, failure_detail: failure?.detail ?? null, updated_at: now, ended_at: run.ended_at ?? now };
    await collections.runs.updateOne(
      { _id: run._id },
      { $set: { status, stats, failure_reason: done.failure_reason, failure_detail: done.failure_detail, updated_at: now, ended_at: done.ended_at } },
    );
    await activeJobs.release(run._id);
    return endEvent(done);
  };

  /** The end event of an ended run whose job has a webhook (written once per run), to be delivered. */
  const endEvent = async (run: RunDoc): Promise<{ webhook?: { key: string; eventId: string } }> => {
    const job = await collections.jobs.findOne({ _id: run.job_id });
    if (!job?.webhook || run.status === 'deleted' || run.status === 'stopped') return {};
    const event = await events.recordRunEnd({
      accountId: run.account_id,
      jobId: run.job_id,
      runId: run._id,
      runSequence: run.run_sequence,
      eventType: run.status === 'completed' ? 'run.completed' : 'run.failed',
      stats: run.stats,
      ...(run.failure_reason ? { failure: { reason: run.failure_reason, detail: run.failure_detail ?? '' } } : {}),
      webhook: job.webhook,
    });
    await collections.runs.updateOne({ _id: run._id }, { $set: { webhook_outcome: 'pending' } });
    return { webhook: { key: event._id, eventId: event.event_id } };
  };

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
    const ended = isTerminal(run.status) ? await endEvent(run) : await recordEnd(run, 'failed', run.stats, failure);
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
            attempts: deps.config.batchTaskAttempts,
            runControl,
            retryDelayMs: (attempt) => Math.min(10_000, 500 * 3 ** (attempt - 1)),
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
      const stats = await withCost(run.account_id, run.key_id, input.stats);
      await collections.runs.updateOne(
        { _id: input.runId, status: { $nin: TERMINAL } },
        { $set: { status: 'running', stats, next_slice: input.nextSlice, updated_at: new Date() } },
      );
    },

    /**
     * Records a run's end, frees its active-job slot and, when the job has a webhook, writes the end
     * event once; the workflow then starts its delivery.
     */
    async batchRunEnd(input: RunEndInput): Promise<{ webhook?: { key: string; eventId: string } }> {
      const run = await collections.runs.findOne({ _id: input.runId });
      if (!run) throw activityFailure('run_missing', `run ${input.runId} does not exist`);
      return recordEnd(run, input.status, input.stats, input.failure);
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
      if (isTerminal(run.status)) return { kind: 'ended', ...(await endEvent(run)), webhookRetry: webhookRetry(deps.config) };
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
