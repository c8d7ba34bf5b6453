/**
 * A Batch run's record, as the commands and the scheduled fires make it: a new run's document, the
 * input its workflow starts with, its search attributes, whether a status has ended, and what a rerun
 * takes again. Pure but for the look-ups of `batchJobChecker` and `countRerun`.
 */
import type { Db } from 'mongodb';
import type { Principal } from '../accounts';
import type { Config } from '../../base/config';
import { ACCOUNT_ATTRIBUTE, STATUS_ATTRIBUTE } from '../jobs/workflow-names';
import { webhookRetry } from '../webhooks/deliveries';
import type { RunInput } from './run-types';
import { batchCollections, emptyStats, ids, readResultDocs, type JobDoc, type RunDoc, type TaskStatus } from './store';
import { JOB_ATTRIBUTE } from '../jobs/workflow-names';

export const TERMINAL_RUN = ['completed', 'failed', 'stopped', 'deleted'] as const;
export const isTerminal = (status: string): boolean => (TERMINAL_RUN as readonly string[]).includes(status);

/** How an active-job slot tells that a Batch run no longer runs (its slot was not freed: a crash). */
export function batchJobChecker(db: Db): (job: { _id: string; created_at: Date }) => Promise<boolean> {
  const { runs } = batchCollections(db);
  return async (job) => {
    const run = await runs.findOne({ _id: job._id }, { projection: { status: 1 } });
    if (!run) return Date.now() - job.created_at.getTime() < 60_000;
    return !isTerminal(run.status);
  };
}

/** A new run's record: `pending`, numbered after the job's runs so far. */
export function newRunRecord(job: JobDoc, keyId: string, runId: string, trigger: RunDoc['trigger'], rerun?: { of: string; statuses: TaskStatus[] }, now = new Date()): RunDoc {
  return {
    _id: runId,
    job_id: job._id,
    account_id: job.account_id,
    key_id: keyId,
    run_sequence: job.run_count + 1,
    status: 'pending',
    trigger,
    stats: emptyStats(job.task_count),
    next_slice: 0,
    rerun_of: rerun?.of ?? null,
    rerun_statuses: rerun?.statuses ?? null,
    failure_reason: null,
    failure_detail: null,
    webhook_outcome: null,
    created_at: now,
    updated_at: now,
    ended_at: null,
  };
}

/** What the run workflow is started with. */
export function runInputOf(
  run: RunDoc,
  job: JobDoc,
  principal: Principal,
  config: Pick<Config, 'batchConcurrency' | 'webhookRetryInitialMs' | 'webhookRetryMaxIntervalMs' | 'webhookRetryHours' | 'webhookTimeoutMs'> & Partial<Pick<Config, 'batchSlicesInFlight' | 'batchHistoryEvents'>>,
): RunInput {
  return {
    runId: run._id,
    jobId: job._id,
    accountId: job.account_id,
    keyId: run.key_id,
    concurrency: Math.max(1, Math.min(principal.plan.concurrency, config.batchConcurrency)),
    sliceCount: job.slice_count,
    total: job.task_count,
    lastBatch: job.status === 'closed',
    ...(config.batchSlicesInFlight !== undefined ? { slicesInFlight: config.batchSlicesInFlight } : {}),
    ...(config.batchHistoryEvents !== undefined ? { historyLimit: config.batchHistoryEvents } : {}),
    ...(run.rerun_of && run.rerun_statuses ? { rerun: { of: run.rerun_of, statuses: run.rerun_statuses } } : {}),
    webhookRetry: webhookRetry(config),
  };
}

/** Search attributes of a run's workflow: an operator finds a job's runs by account, job and status. */
export const runSearchAttributes = (job: Pick<JobDoc, '_id' | 'account_id'>) => [
  { key: ACCOUNT_ATTRIBUTE, value: job.account_id },
  { key: JOB_ATTRIBUTE, value: job._id },
  { key: STATUS_ATTRIBUTE, value: 'pending' },
];

/** How many tasks a rerun fetches again and how many it keeps from the run it reruns. */
export async function countRerun(db: Db, job: JobDoc, of: string | null, statuses: TaskStatus[] | undefined): Promise<{ retried: number; inherited: number }> {
  if (!of || !statuses) return { retried: job.task_count, inherited: 0 };
  const collections = batchCollections(db);
  let retried = 0;
  let covered = 0;
  for (let n = 0; n < job.slice_count; n += 200) {
    const wanted = Array.from({ length: Math.min(200, job.slice_count - n) }, (_, index) => ids.result(of, n + index));
    for (const doc of await readResultDocs(collections, wanted)) {
      for (const item of doc.items) {
        covered++;
        if ((statuses as string[]).includes(item.status) || item.status === 'pending') retried++;
      }
    }
  }
  // Tasks the run never reached (no result document) are fetched again too.
  retried += job.task_count - covered;
  return { retried, inherited: job.task_count - retried };
}


/** Keeps a run's webhook outcome on its record (the run has ended: no other writer of its record). */
export async function recordWebhookOutcome(db: Db, runId: string, outcome: NonNullable<RunDoc['webhook_outcome']>): Promise<void> {
  await batchCollections(db).runs.updateOne({ _id: runId }, { $set: { webhook_outcome: outcome } });
}

/** A delivery's start failed (`not_started`) or, tried again, succeeded (`pending` again); an outcome already final stays. */
export async function recordWebhookStart(db: Db, runId: string, outcome: 'not_started' | 'pending'): Promise<void> {
  const from = outcome === 'pending' ? 'not_started' : 'pending';
  await batchCollections(db).runs.updateOne({ _id: runId, webhook_outcome: from }, { $set: { webhook_outcome: outcome } });
}
