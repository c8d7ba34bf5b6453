/**
 * What every Batch command of the API shares: the store, the active-job slots, the idempotency keys,
 * the look-ups of an account's job and run, the signals to a run's workflow, the writing of task
 * slices, the credits probe and the start of a run. Built once per process (createBatchCommands).
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { refusalError, type Accounts, type Principal } from '../accounts';
import type { Config } from '../../base/config';
import { problem } from '../../base/errors';
import { IdempotencyKeys, type Claimed } from '../jobs/idempotency';
import type { IdempotencyWords } from '../jobs/idempotent';
import { startJob } from '../jobs/start';
import { batchRunWorkflowId } from '../jobs/workflow-names';
import type { HmacKeys } from '../webhooks/hmac-keys';
import type { TaskStatus } from './run-types';
import { newRunRecord } from './runs/records';
import { batchActiveJobs } from './runs/slots';
import { firstRunId, runStartPlan } from './runs/start';
import { createRunReader, type RunView } from './runs/view';
import { createJobSchedules, type JobSchedules } from './schedules/temporal';
import { ids, SLICE_SIZE, type BatchStore, type BatchTask, type JobDoc, type RunDoc, type SliceDoc } from './store';

/** A webhook URL checked by the fetch engine's target rules (the composition root wires it: core does not import the engine). */
export type WebhookUrlCheck = (url: string) => Promise<{ ok: true; url: URL } | { ok: false; code: 'callback_url_must_be_https' | 'callback_url_unresolvable' | 'invalid_argument'; detail: string }>;

export interface BatchCommandDeps {
  store: BatchStore;
  accounts: Accounts;
  temporal: { client: Client };
  config: Pick<
    Config,
    | 'temporalTaskQueue'
    | 'batchConcurrency'
    | 'batchSlicesInFlight'
    | 'batchHistoryEvents'
    | 'webhookRetryInitialMs'
    | 'webhookRetryMaxIntervalMs'
    | 'webhookRetryHours'
    | 'webhookTimeoutMs'
    | 'secretsKey'
    | 'batchScheduleMinIntervalSeconds'
    | 'csvInputMaxBytes'
    | 'docsUrl'
    | 'resultsRetentionDays'
  >;
  /** Checks a webhook URL; absent where no command sets a webhook (the worker). */
  checkWebhookUrl?: WebhookUrlCheck;
  /** The process's HMAC key store; absent when the server has no SECRETS_KEY. */
  hmacKeys?: HmacKeys;
}

/** A writer mark older than this belongs to a call that died: the next call takes it over. */
export const STALE_WRITER_MS = 2 * 60 * 1000;

export function createCommandContext(deps: BatchCommandDeps) {
  const { store } = deps;
  const activeJobs = batchActiveJobs(store);
  const idempotencyKeys = new IdempotencyKeys(store.db, 'batch');
  const runs = createRunReader(store);

  const ownJob = async (principal: Principal, jobId: string): Promise<JobDoc> => {
    const job = await store.jobs.findOne({ _id: jobId });
    if (!job || job.account_id !== principal.accountId || job.status === 'deleted') throw problem('not_found', `No job ${jobId} on this account.`);
    return job;
  };

  const latestRun = async (job: JobDoc): Promise<RunView | null> => (job.latest_run_id ? runs.one({ _id: job.latest_run_id }) : null);

  const signal = async (runId: string, name: string, ...args: unknown[]): Promise<void> => {
    try {
      await deps.temporal.client.workflow.getHandle(batchRunWorkflowId(runId)).signal(name, ...args);
    } catch (error) {
      // A run whose workflow has ended needs no signal; its record already says how it ended.
      if (!(error instanceof WorkflowNotFoundError)) throw error;
    }
  };

  /** Writes tasks as slices numbered from `firstSlice`, their sequence numbers from `firstSeq`. */
  const writeSlices = async (jobId: string, firstSlice: number, firstSeq: number, tasks: BatchTask[]): Promise<number> => {
    const docs: SliceDoc[] = [];
    for (let offset = 0; offset < tasks.length; offset += SLICE_SIZE) {
      const n = firstSlice + docs.length;
      docs.push({ _id: ids.slice(jobId, n), job_id: jobId, n, first: firstSeq + offset, tasks: tasks.slice(offset, offset + SLICE_SIZE), created_at: new Date() });
    }
    // A slice left by a call that died under the same numbers is replaced.
    await store.writeSlices(docs);
    return docs.length;
  };

  const probeCredits = async (principal: Principal): Promise<void> => {
    const probe = await deps.accounts.charging.tryReserve(principal, 1);
    if ('refused' in probe) {
      const refused = refusalError(probe.refused, 'batch', principal);
      throw problem('payment_required', refused.detail);
    }
    await probe.release();
  };

  /**
   * Starts run `runId` of `job` through the one start routine (slot, record, workflow `run-<id>`); a
   * start cut short of the same run (a claim taken over) is finished, its record kept.
   */
  const startRun = async (
    principal: Principal,
    job: JobDoc,
    runId: string,
    rerun?: { of: string; statuses: TaskStatus[] },
    claim?: Claimed,
    also?: { take(): Promise<void>; giveBack(): Promise<void> },
  ): Promise<RunDoc> => {
    const run = (await store.runs.findOne({ _id: runId })) ?? newRunRecord(job, principal.keyId, runId, 'manual', rerun);
    await startJob(
      { db: store.db, client: deps.temporal.client },
      runStartPlan({ store, activeJobs, config: deps.config }, job, run, principal, claim ? { id: claim.id, owned: claim.owned } : undefined, also),
    );
    await store.jobs.updateOne({ _id: job._id, run_count: { $lt: run.run_sequence } }, { $set: { latest_run_id: runId, run_count: run.run_sequence, updated_at: run.created_at } });
    return run;
  };

  let jobSchedules: JobSchedules | undefined;
  const schedules = (): JobSchedules => (jobSchedules ??= createJobSchedules(deps.temporal.client, deps.config.temporalTaskQueue));

  return { deps, store, idempotencyKeys, runs, ownJob, latestRun, signal, writeSlices, probeCredits, startRun, schedules, firstRunId };
}

export type CommandContext = ReturnType<typeof createCommandContext>;

/** Batch's words for idempotency refusals: the clients' `idempotency_key_conflict` (409). */
export const batchIdempotencyWords: IdempotencyWords = (refusal) =>
  refusal === 'invalid_key'
    ? problem('invalid_argument', 'Idempotency-Key must be 1 to 255 characters.', { members: { parameter: 'Idempotency-Key' } })
    : problem(
        'idempotency_key_conflict',
        refusal === 'reused' ? 'This Idempotency-Key was used with another body.' : 'A request with this Idempotency-Key is still being handled; retry shortly.',
        { members: { reason: 'idempotency_key_conflict' } },
      );
