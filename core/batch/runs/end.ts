/**
 * A Batch run's end for the job-end routine (core/jobs/end.ts): the run record's terminal status, end
 * time, failure and final stats, written once by a conditional update while the run has not ended;
 * then its active-job slot; then, when the job has a webhook, its end event (written once per run),
 * which the workflow delivers. A run the API deleted ends `deleted` whatever its workflow decided.
 */
import type { Db } from 'mongodb';
import type { Accounts } from '../../accounts';
import type { ActiveJobs } from '../../jobs/active-jobs';
import { claimByUpdate, endJob, type JobEndSurface, type JobEnded } from '../../jobs/end';
import type { WebhookEvents } from '../../webhooks/events';
import { WorkFailure } from '../../jobs/work';
import type { RunEndInput, RunStats } from '../run-types';
import { BatchStore, type RunDoc } from '../store';
import { TERMINAL_RUN, isTerminal } from './records';

/** How a run ends: its status, its final stats (none: the record's stay) and why it failed. */
export type BatchRunEnd = Omit<RunEndInput, 'runId' | 'stats'> & { stats?: RunStats };

/** The webhook event of an ended run, for the workflow to deliver. */
export interface RunEndFollow {
  webhook?: { key: string; eventId: string };
}

export interface BatchRunEndDeps {
  /** The database whose Batch store holds the run. */
  db: Db;
  activeJobs: Pick<ActiveJobs, 'release'>;
  /** The final stats as stored (priced); none: as given. */
  priced?: (run: RunDoc, stats: RunStats) => Promise<RunStats>;
  /** Where end events are written; none (the reconciler, with no workflow to deliver them): no event. */
  events?: Pick<WebhookEvents, 'recordRunEnd'>;
}

/** Stats with `spend.cost`: the credits at the plan's price per credit. */
export function pricedStats(accounts: Pick<Accounts, 'principalFor'>) {
  return async (run: Pick<RunDoc, 'account_id' | 'key_id'>, stats: RunStats): Promise<RunStats> => {
    const { plan } = await accounts.principalFor(run.account_id, run.key_id);
    const perCredit = plan.credits > 0 ? plan.price / plan.credits : 0;
    return { ...stats, spend: { credits: stats.spend.credits, cost: Math.round(stats.spend.credits * perCredit * 1e6) / 1e6 } };
  };
}

export function batchRunEndSurface(deps: BatchRunEndDeps): JobEndSurface<BatchRunEnd, RunDoc, RunEndFollow> {
  const { runs, controls, jobs } = BatchStore.of(deps.db);
  const surface: JobEndSurface<BatchRunEnd, RunDoc, RunEndFollow> = {
    async claim(runId, end, at) {
      const run = await runs.findOne({ _id: runId });
      if (!run || isTerminal(run.status)) return run ? { won: false, record: run } : null;
      const stats = !end.stats ? run.stats : deps.priced ? await deps.priced(run, end.stats) : end.stats;
      const asked = await controls.findOne({ _id: runId }, { projection: { stop: 1 } });
      const status = asked?.stop === 'deleted' ? 'deleted' : end.status;
      const set = { status, stats, failure_reason: end.failure?.reason ?? null, failure_detail: end.failure?.detail ?? null, updated_at: at, ended_at: at };
      return claimByUpdate(runs, runId, { status: { $nin: [...TERMINAL_RUN] } }, { $set: set }, (stored) => stored.status === status && stored.ended_at?.getTime() === at.getTime());
    },

    release: (runId) => deps.activeJobs.release(runId),
  };
  const events = deps.events;
  if (!events) return surface;
  return {
    ...surface,
    // Deleted and stopped runs send no webhook (the caller ended them).
    async follow(run) {
      if (!isTerminal(run.status) || run.status === 'deleted' || run.status === 'stopped') return {};
      const job = await jobs.findOne({ _id: run.job_id }, { projection: { webhook: 1 } });
      if (!job?.webhook) return {};
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
      // A retried end leaves an outcome already moved on (delivered, not_started) as it is.
      await runs.updateOne({ _id: run._id, webhook_outcome: null }, { $set: { webhook_outcome: 'pending' } });
      return { webhook: { key: event._id, eventId: event.event_id } };
    },
  };
}

/**
 * Ends a run for its workflow: its webhook event, if any, to deliver. A run whose record is gone is
 * `run_missing` (errors.ts): there is nothing to end, and trying again finds nothing either.
 */
export async function endRecordedRun(deps: BatchRunEndDeps, runId: string, end: BatchRunEnd): Promise<RunEndFollow> {
  const surface = batchRunEndSurface(deps);
  const claim: typeof surface.claim = async (id, asked, at) => (await surface.claim(id, asked, at)) ?? missingRun(id);
  return (await endJob({ ...surface, claim }, runId, end)).follow ?? {};
}

const missingRun = (runId: string): never => {
  throw new WorkFailure('run_missing', `run ${runId} does not exist`);
};

/** Ends a run through the job-end routine; answers the run as it stands and its webhook event, if any. */
export function endBatchRun(deps: BatchRunEndDeps, runId: string, end: BatchRunEnd): Promise<JobEnded<RunDoc, RunEndFollow>> {
  return endJob(batchRunEndSurface(deps), runId, end);
}
