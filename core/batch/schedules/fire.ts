/**
 * One fire of a scheduled job's Temporal Schedule (`batchScheduledFireWorkflow`): a run of the job's
 * tasks with trigger `scheduled`, started through the one start routine like any run (core/jobs/start.ts:
 * the start written down, the account's slot and the run's record taken by runs/start.ts's plan), its
 * workflow then started by the fire's workflow as a child, which the fire waits for (so the Schedule
 * skips a fire while the last one's run still runs). The run's first progress confirms its start.
 *
 *   job gone or not scheduled ─> skipped
 *   account or key gone, no credits, every active-job slot taken ─> a failed run, once per change of
 *     state (refusals.ts), its end event for the fire to deliver
 *   run already ended (a repeated fire) ─> its end again
 *   else ─> beginStart (start document, slot, record) ─> `run`
 *
 * Safe to repeat: the run's id is derived from the fire's workflow id.
 */
import type { Accounts, Principal } from '../../accounts';
import { isAccountsError, refusalError } from '../../accounts';
import { insertIgnoringDuplicates } from '../../../base/db';
import { isApiError } from '../../../base/errors';
import { derivedId } from '../../../base/ids';
import type { ActiveJobs } from '../../jobs/active-jobs';
import { beginStart } from '../../jobs/start';
import { webhookRetry } from '../../webhooks/deliveries';
import type { ScheduledFire } from '../run-types';
import type { BatchRunEnd, RunEndFollow } from '../runs/end';
import { isTerminal, newRunRecord, runInputOf } from '../runs/records';
import { runStartPlan, type RunStartConfig } from '../runs/start';
import type { BatchStore, JobDoc, RunDoc } from '../store';
import { clearRefusal, isNewRefusal, noteRefusal } from './refusals';
import type { JobSchedules } from './temporal';

export interface FireDeps {
  store: BatchStore;
  accounts: Accounts;
  activeJobs: ActiveJobs;
  schedules: Pick<JobSchedules, 'nextFire'>;
  config: RunStartConfig & Parameters<typeof runInputOf>[3];
  /** A run's end through the job-end routine: its webhook event, if any. */
  endRun(runId: string, end: BatchRunEnd): Promise<RunEndFollow>;
}

export function scheduledFires(deps: FireDeps) {
  const { store } = deps;

  /** The job's pointer to its newest run, its run count and when its schedule fires next. */
  const noteFire = async (job: JobDoc, run: RunDoc): Promise<void> => {
    const next = job.schedule ? await deps.schedules.nextFire(job._id, job.schedule).catch(() => job.next_scheduled_run) : null;
    const set = { latest_run_id: run._id, run_count: Math.max(job.run_count, run.run_sequence), next_scheduled_run: next, updated_at: new Date() };
    // The API may write this job at the same moment (a webhook, a schedule); on a store whose updates
    // are read-modify-write one of the two can be lost, so the pointer is checked and written again.
    for (let attempt = 0; attempt < 3; attempt++) {
      await store.jobs.updateOne({ _id: job._id, run_count: { $lte: run.run_sequence } }, { $set: set });
      const now = await store.jobs.findOne({ _id: job._id }, { projection: { run_count: 1 } });
      if (!now || now.run_count >= run.run_sequence) return;
    }
  };

  const ended = async (runId: string, end: BatchRunEnd): Promise<ScheduledFire> => ({ kind: 'ended', ...(await deps.endRun(runId, end)), webhookRetry: webhookRetry(deps.config) });

  /** A fire the account cannot run: recorded as a failed run, so its webhook and its reader learn why. */
  const failFire = async (job: JobDoc, earlier: RunDoc | null, runId: string, failure: { reason: string; detail: string }): Promise<ScheduledFire> => {
    // The same refusal as the last fire's writes nothing: one record per change of state.
    if (!earlier && !isNewRefusal(job, failure.reason)) return { kind: 'skipped', reason: `Refused again: ${failure.detail}` };
    const run = earlier ?? newRunRecord(job, job.key_id, runId, 'scheduled');
    if (!earlier) await insertIgnoringDuplicates(store.runs, [run]);
    await noteFire(job, run);
    if (!earlier) await noteRefusal(store, job._id, failure.reason);
    // A run that had ended keeps its end: the routine answers its event again.
    return ended(run._id, { status: 'failed', failure });
  };

  return async function fire(input: { jobId: string; fireId: string }): Promise<ScheduledFire> {
    const job = await store.jobs.findOne({ _id: input.jobId });
    if (!job || job.status === 'deleted' || job.type !== 'scheduled') return { kind: 'skipped', reason: 'The job no longer exists.' };
    const runId = derivedId('run', input.fireId);
    const earlier = await store.runs.findOne({ _id: runId });
    let principal: Principal;
    try {
      principal = await deps.accounts.principalFor(job.account_id, job.key_id);
    } catch (error) {
      if (!isAccountsError(error)) throw error;
      return failFire(job, earlier, runId, { reason: 'subscription_inactive', detail: `The job's account or API key can no longer run jobs: ${error.message}` });
    }
    if (!earlier) {
      const probe = await deps.accounts.charging.tryReserve(principal, 1);
      if ('refused' in probe) {
        const reason = probe.refused === 'key_cap' ? 'api_key_cap_reached' : 'insufficient_credits';
        return failFire(job, earlier, runId, { reason, detail: refusalError(probe.refused, 'batch', principal).detail });
      }
      await probe.release();
    }
    const run = earlier ?? newRunRecord(job, job.key_id, runId, 'scheduled');
    // A run past `pending` was started already (a repeated fire): it holds its slot and record.
    if (run.status === 'pending') {
      try {
        await beginStart(store.db, runStartPlan({ store, activeJobs: deps.activeJobs, config: deps.config }, job, run, principal));
      } catch (error) {
        if (!isApiError(error) || error.code !== 'quota_exceeded') throw error;
        // The start gave back what it took, a record it had written included.
        const still = await store.runs.findOne({ _id: runId });
        return failFire(job, still, runId, { reason: 'quota_exceeded', detail: `The account already ran its ${principal.plan.activeJobs} active jobs (Crawl and Batch together) when the schedule fired.` });
      }
    }
    await noteFire(job, run);
    await clearRefusal(store, job);
    if (isTerminal(run.status)) return ended(run._id, { status: run.status as BatchRunEnd['status'] });
    return { kind: 'run', input: runInputOf(run, job, principal, deps.config), jobId: job._id, accountId: job.account_id };
  };
}
