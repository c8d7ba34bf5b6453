/** The Batch activities, built once per worker with their dependencies. */
import { ApplicationFailure } from '@temporalio/activity';
import type { RunEndInput, SliceInput, SliceSummary } from '../../core/batch/run-types';
import { batchCollections, type RunStats, type RunStatus } from '../../core/batch/store';
import { writeExport } from '../../core/batch/exports';
import { batchJobChecker } from '../../core/batch/jobs';
import { CrawlCharges } from '../../core/crawls/charges';
import { ActiveJobs } from '../../core/jobs/active-jobs';
import { createWebhookEvents } from '../../core/webhooks/events';
import { Semaphore } from '../crawl/politeness';
import type { ActivityDeps } from '../deps';
import { runBatchSlice, type RunControl } from './slice';

const TERMINAL: RunStatus[] = ['completed', 'failed', 'stopped', 'deleted'];
/** How long a run's stop and pause flags are trusted before they are read again. */
const CONTROL_CHECK_MS = 1_000;

export function batchActivities(deps: ActivityDeps) {
  const collections = batchCollections(deps.db);
  const charges = new CrawlCharges(deps.db, deps.accounts, { charges: collections.charges, holdPrefix: 'batch' });
  const activeJobs = new ActiveJobs(deps.db, { batch: batchJobChecker(deps.db) });
  const events = createWebhookEvents(deps.db);
  const workerLimit = new Semaphore(deps.config.batchConcurrency);
  // Each run's window in this worker: its slices in flight share it.
  const runLimits = new Map<string, { limit: Semaphore; users: number }>();
  const runLimit = (runId: string, concurrency: number) => {
    const entry = runLimits.get(runId) ?? { limit: new Semaphore(concurrency), users: 0 };
    entry.users++;
    runLimits.set(runId, entry);
    return {
      limit: entry.limit,
      done: () => {
        if (--entry.users === 0) runLimits.delete(runId);
      },
    };
  };
  const controls = new Map<string, { at: number; control: RunControl }>();
  /** What a run's record asks of its slices: go on, hold (paused) or stop (stopped, deleted or ended). */
  const runControl = async (runId: string): Promise<RunControl> => {
    const cached = controls.get(runId);
    if (cached && Date.now() - cached.at < CONTROL_CHECK_MS) return cached.control;
    const [run, asked] = await Promise.all([collections.runs.findOne({ _id: runId }, { projection: { status: 1 } }), collections.controls.findOne({ _id: runId })]);
    const control: RunControl = !run || asked?.stop || TERMINAL.includes(run.status) ? 'stop' : asked?.pause_state === 'paused' ? 'pause' : 'go';
    controls.set(runId, { at: Date.now(), control });
    if (controls.size > 1_000) controls.delete(controls.keys().next().value as string);
    return control;
  };

  /** Stats with `spend.cost`: the credits at the plan's price per credit. */
  const withCost = async (accountId: string, keyId: string, stats: RunStats): Promise<RunStats> => {
    const { plan } = await deps.accounts.principalFor(accountId, keyId);
    const perCredit = plan.credits > 0 ? plan.price / plan.credits : 0;
    return { ...stats, spend: { credits: stats.spend.credits, cost: Math.round(stats.spend.credits * perCredit * 1e6) / 1e6 } };
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
      if (!run) throw ApplicationFailure.nonRetryable(`run ${input.runId} does not exist`, 'run_missing');
      const stats = await withCost(run.account_id, run.key_id, input.stats);
      const asked = await collections.controls.findOne({ _id: input.runId });
      const status = run.status === 'deleted' || asked?.stop === 'deleted' ? 'deleted' : input.status;
      const now = new Date();
      await collections.runs.updateOne(
        { _id: input.runId },
        {
          $set: {
            status,
            stats,
            failure_reason: input.failure?.reason ?? null,
            failure_detail: input.failure?.detail ?? null,
            updated_at: now,
            ended_at: run.ended_at ?? now,
          },
        },
      );
      await activeJobs.release(input.runId);
      const job = await collections.jobs.findOne({ _id: run.job_id });
      if (!job?.webhook || status === 'deleted' || status === 'stopped') return {};
      const event = await events.recordRunEnd({
        accountId: run.account_id,
        jobId: run.job_id,
        runId: run._id,
        runSequence: run.run_sequence,
        eventType: status === 'completed' ? 'run.completed' : 'run.failed',
        stats,
        ...(input.failure ? { failure: input.failure } : {}),
        webhook: job.webhook,
      });
      await collections.runs.updateOne({ _id: input.runId }, { $set: { webhook_outcome: 'pending' } });
      return { webhook: { key: event._id, eventId: event.event_id } };
    },

    /** Writes an export's file (NDJSON or CSV of every task of the run, bodies included). */
    async batchExport(exportId: string): Promise<void> {
      await writeExport(deps.db, exportId);
    },
  };
}
