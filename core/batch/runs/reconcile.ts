/** How the reconciler (core/jobs/reconcile.ts) settles Batch runs: `run-<id>`, one slot, `pending`/`running` until the workflow ends. */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import { isAccountsError, type Principal } from '../../accounts';
import type { KindReconciler } from '../../jobs/reconcile';
import { BATCH_RUN_WORKFLOW_TYPE, batchRunWorkflowId } from '../../jobs/workflow-names';
import { BatchStore } from '../store';
import { endBatchRun } from './end';
import { isTerminal } from './records';
import { batchActiveJobs } from './slots';
import { firstRunId, runWorkflowStart, type RunStartConfig } from './start';

const WAITING = ['pending', 'running'];

export function batchReconciler(deps: { db: Db; client: Client; config: RunStartConfig; principalFor: (accountId: string, keyId: string) => Promise<Principal> }): KindReconciler {
  const store = BatchStore.of(deps.db);
  const activeJobs = batchActiveJobs(store);

  /** A job whose create never started its first run was never accepted: it goes with its tasks. */
  const dropUnstartedJob = async (jobId: string): Promise<void> => {
    const job = await store.jobs.findOne({ _id: jobId });
    if (!job || job.type !== 'regular' || job.run_count > 0) return;
    if (await store.runs.findOne({ job_id: jobId }, { projection: { _id: 1 } })) return;
    await store.jobs.deleteOne({ _id: jobId, run_count: 0 });
    await store.slices.deleteMany({ job_id: jobId });
  };

  return {
    kind: 'batch',
    slotKind: 'batch',
    surface: 'batch',
    workflowId: batchRunWorkflowId,
    // Its client never heard of the run (or of the job its create wrote): both go, the slot returns.
    async giveBack(start) {
      const run = await store.runs.findOne({ _id: start.record_id });
      // A scheduled run was accepted when its schedule fired (no caller waits for an answer): it stays,
      // and `restart` starts its workflow again if its fire never did.
      if (run?.trigger === 'scheduled') return;
      await store.runs.deleteOne({ _id: start.record_id, status: 'pending' });
      await activeJobs.release(start.record_id);
      const jobId = run?.job_id ?? `job_${start.record_id.slice(start.record_id.indexOf('_') + 1)}`;
      if (firstRunId(jobId) === start.record_id) await dropUnstartedJob(jobId);
    },
    async unfinished(before, limit) {
      const docs = await store.runs.find({ status: { $in: WAITING as never[] }, created_at: { $lt: before } }, { projection: { _id: 1 } }).limit(limit).toArray();
      return docs.map((doc) => doc._id);
    },
    async waiting(runId) {
      const run = await store.runs.findOne({ _id: runId }, { projection: { status: 1 } });
      return run !== null && !isTerminal(run.status);
    },
    async restart(runId) {
      const run = await store.runs.findOne({ _id: runId });
      const job = run ? await store.jobs.findOne({ _id: run.job_id }) : null;
      if (!run || !job) return;
      let principal: Principal;
      try {
        principal = await deps.principalFor(job.account_id, run.key_id);
      } catch (error) {
        if (!isAccountsError(error)) throw error;
        // Its key or account is gone: the run cannot run again, it ends failed and its slot returns
        // (no end event: there is no workflow left to deliver it).
        await endBatchRun({ db: deps.db, activeJobs }, runId, {
          status: 'failed',
          failure: { reason: 'subscription_inactive', detail: `The run's workflow was lost and its account or API key can no longer run jobs: ${error.message}` },
        });
        return;
      }
      await activeJobs.acquire(job.account_id, principal.plan.activeJobs, { id: runId, kind: 'batch' });
      try {
        await deps.client.workflow.start(BATCH_RUN_WORKFLOW_TYPE, runWorkflowStart(run, job, principal, deps.config));
      } catch (error) {
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      }
    },
    async started(reservedId) {
      if (reservedId.startsWith('job_')) {
        const job = await store.jobs.findOne({ _id: reservedId });
        if (!job) return false;
        if (job.type === 'scheduled' || (await store.runs.findOne({ _id: firstRunId(reservedId) }, { projection: { _id: 1 } }))) return true;
        await dropUnstartedJob(reservedId);
        return false;
      }
      return (await store.runs.findOne({ _id: reservedId }, { projection: { _id: 1 } })) !== null;
    },
  };
}
