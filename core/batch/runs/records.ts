/**
 * A Batch run's record, as the commands and the scheduled fires make it: a new run's document, the
 * input its workflow starts with, its search attributes, and whether a status has ended. Pure.
 */
import type { Principal } from '../../accounts';
import type { Config } from '../../../base/config';
import { ACCOUNT_ATTRIBUTE, JOB_ATTRIBUTE, STATUS_ATTRIBUTE } from '../../jobs/workflow-names';
import { webhookRetry } from '../../webhooks/deliveries';
import { emptyStats, type RunInput, type TaskStatus } from '../run-types';
import type { JobDoc, RunDoc } from '../store/records';

export const TERMINAL_RUN = ['completed', 'failed', 'stopped', 'deleted'] as const;
export const isTerminal = (status: string): boolean => (TERMINAL_RUN as readonly string[]).includes(status);

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
