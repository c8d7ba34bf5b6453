/**
 * A Batch run's start through the one start routine (core/jobs/start.ts): its workflow (`run-<id>`,
 * from the run's and job's records, so the reconciler can start it again) and what the start takes and
 * gives back (the active-job slot, the run's record).
 */
import { WorkflowIdReusePolicy, type WorkflowStartOptions } from '@temporalio/client';
import type { Principal } from '../../accounts';
import type { Config } from '../../../base/config';
import { insertIgnoringDuplicates } from '../../../base/db';
import { problem } from '../../../base/errors';
import type { ActiveJobs } from '../../jobs/active-jobs';
import type { StartPlan } from '../../jobs/start';
import { BATCH_RUN_WORKFLOW_TYPE, batchRunWorkflowId } from '../../jobs/workflow-names';
import type { BatchStore, JobDoc, RunDoc } from '../store';
import { isTerminal, runInputOf, runSearchAttributes } from './records';

export type RunStartConfig = Pick<Config, 'temporalTaskQueue' | 'batchConcurrency' | 'webhookRetryInitialMs' | 'webhookRetryMaxIntervalMs' | 'webhookRetryHours' | 'webhookTimeoutMs'>;

/** The id of a job's first run: the job's own id under the run prefix (a retry of the create finds it). */
export const firstRunId = (jobId: string): string => `run_${jobId.slice(jobId.indexOf('_') + 1)}`;

export function runWorkflowStart(run: RunDoc, job: JobDoc, principal: Principal, config: RunStartConfig): WorkflowStartOptions {
  return {
    taskQueue: config.temporalTaskQueue,
    workflowId: batchRunWorkflowId(run._id),
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    args: [runInputOf(run, job, principal, config)],
    typedSearchAttributes: runSearchAttributes(job),
    memo: { progress: { completed: 0, total: job.task_count } },
  };
}

/**
 * The start of `run`: a slot of the account (none for a run that has ended: a retry of a start that
 * went through), the run's record (kept if a start cut short wrote it).
 */
export function runStartPlan(
  deps: { store: BatchStore; activeJobs: ActiveJobs; config: RunStartConfig },
  job: JobDoc,
  run: RunDoc,
  principal: Principal,
  claim?: { id: string | null; owned(): Promise<boolean> },
  /** What else the start writes once it holds the slot, and takes back (a new job's tasks and record). */
  also?: { take(): Promise<void>; giveBack(): Promise<void> },
): StartPlan {
  const { runs } = deps.store;
  const limit = principal.plan.activeJobs;
  return {
    kind: 'batch',
    recordId: run._id,
    accountId: job.account_id,
    claimId: claim?.id ?? null,
    workflowType: BATCH_RUN_WORKFLOW_TYPE,
    workflow: runWorkflowStart(run, job, principal, deps.config),
    take: async () => {
      const stored = await runs.findOne({ _id: run._id }, { projection: { status: 1 } });
      if (stored && isTerminal(stored.status)) return;
      const grant = await deps.activeJobs.acquire(job.account_id, limit, { id: run._id, kind: 'batch' });
      if (!grant.ok) {
        throw problem('quota_exceeded', `The account already runs its ${limit} active jobs (Crawl and Batch together); retry when one ends.`, {
          headers: { 'Retry-After': '30' },
        });
      }
      await also?.take();
      await insertIgnoringDuplicates(runs, [run]);
    },
    // A run whose workflow never started was never accepted: no record of it stays.
    giveBack: async () => {
      await runs.deleteOne({ _id: run._id, status: 'pending' });
      await also?.giveBack();
      await deps.activeJobs.release(run._id);
    },
    ...(claim ? { owned: claim.owned } : {}),
  };
}
