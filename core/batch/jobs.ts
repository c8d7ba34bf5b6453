/**
 * Batch commands: everything that changes a job or a run. The API validates a request and calls one
 * command; the command keeps the job's invariants on FerretDB (no transactions) with insert-first
 * writes and compare-and-set updates, and talks to the run workflow with signals.
 *
 *   create ─> idempotency claim (reserves the job id) ─> credits probe ─> job, slices ─> startJob: active-job
 *            slot ─> run ─> workflow `run-<id>` (core/jobs/start.ts; a failure gives back and removes what
 *            was written; a start cut short is finished by the key's retry or by the reconciler)
 *   add tasks ─> take the job's writer mark (CAS) ─> slices ─> counts, mark off ─> signal the run
 *   close, pause, resume, stop, delete, rerun ─> the run's record ─> signal
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import type { Db } from 'mongodb';
import { refusalError, type Accounts, type Principal } from '../accounts';
import type { Config } from '../config';
import { insertIgnoringDuplicates, isDuplicateKey } from '../db';
import { problem } from '../errors';
import { newId } from '../ids';
import { ActiveJobs } from '../jobs/active-jobs';
import { IdempotencyKeys, type Claimed } from '../jobs/idempotency';
import { startJob } from '../jobs/start';
import { firstRunId, runStartPlan } from './starts';
import { batchJobChecker, countRerun, isTerminal, newRunRecord, runInputOf, runSearchAttributes, TERMINAL_RUN } from './run-records';
import { createJobSchedules, type JobSchedule, type JobSchedules, type ScheduleState } from './schedules';
import { createRunReader, isDeleted, runStatusOf, type RunView } from './runs';
import {
  batchCollections,
  ids,
  toSliceRecord,
  MAX_TASKS_PER_JOB,
  SLICE_SIZE,
  type JobDoc,
  type RunControlDoc,
  type RunDoc,
  type SliceDoc,
  type StoredTask,
  type TaskStatus,
  type WebhookSetting,
} from './store';
import { batchRunWorkflowId, PAUSE_SIGNAL, RESUME_SIGNAL, STOP_SIGNAL, TASKS_ADDED_SIGNAL, type StopKind } from '../jobs/workflow-names';

/** A writer mark older than this belongs to a call that died: the next call takes it over. */
const STALE_WRITER_MS = 2 * 60 * 1000;

export interface NewJob {
  status: 'open' | 'closed';
  /** A scheduled job's schedule (checked): it starts no run, its fires do. */
  schedule?: JobSchedule;
  params: Record<string, string>;
  tasks: StoredTask[];
  external_id?: string;
  name?: string;
  metadata?: Record<string, string>;
  webhook?: WebhookSetting;
}

export interface BatchCommandDeps {
  db: Db;
  accounts: Accounts;
  temporal: { client: Client };
  config: Pick<Config, 'temporalTaskQueue' | 'batchConcurrency' | 'batchSlicesInFlight' | 'batchHistoryEvents' | 'webhookRetryInitialMs' | 'webhookRetryMaxIntervalMs' | 'webhookRetryHours' | 'webhookTimeoutMs'>;
}

export function createBatchCommands(deps: BatchCommandDeps) {
  const collections = batchCollections(deps.db);
  const activeJobs = new ActiveJobs(deps.db, { batch: batchJobChecker(deps.db) });
  const idempotencyKeys = new IdempotencyKeys(deps.db, 'batch');

  const ownJob = async (principal: Principal, jobId: string): Promise<JobDoc> => {
    const job = await collections.jobs.findOne({ _id: jobId });
    if (!job || job.account_id !== principal.accountId || job.status === 'deleted') throw problem('not_found', `No job ${jobId} on this account.`);
    return job;
  };

  const runs = createRunReader(deps.db);
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
  const writeSlices = async (jobId: string, firstSlice: number, firstSeq: number, tasks: StoredTask[]): Promise<number> => {
    const docs: SliceDoc[] = [];
    for (let offset = 0; offset < tasks.length; offset += SLICE_SIZE) {
      const n = firstSlice + docs.length;
      docs.push({ _id: ids.slice(jobId, n), job_id: jobId, n, first: firstSeq + offset, tasks: tasks.slice(offset, offset + SLICE_SIZE), created_at: new Date() });
    }
    for (let from = 0; from < docs.length; from += 100) {
      try {
        await collections.slices.insertMany(docs.slice(from, from + 100).map(toSliceRecord), { ordered: false });
      } catch (error) {
        // A slice left by a call that died under the same numbers is replaced.
        if (!isDuplicateKey(error) && !(error as { writeErrors?: unknown }).writeErrors) throw error;
        for (const doc of docs.slice(from, from + 100)) await collections.slices.replaceOne({ _id: doc._id }, toSliceRecord(doc), { upsert: true });
      }
    }
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
    const run = (await collections.runs.findOne({ _id: runId })) ?? newRunRecord(job, principal.keyId, runId, 'manual', rerun);
    await startJob(
      { db: deps.db, client: deps.temporal.client },
      runStartPlan({ db: deps.db, activeJobs, config: deps.config }, job, run, principal, claim ? { id: claim.id, owned: claim.owned } : undefined, also),
    );
    await collections.jobs.updateOne({ _id: job._id, run_count: { $lt: run.run_sequence } }, { $set: { latest_run_id: runId, run_count: run.run_sequence, updated_at: run.created_at } });
    return run;
  };

  let jobSchedules: JobSchedules | undefined;
  const schedules = (): JobSchedules => (jobSchedules ??= createJobSchedules(deps.temporal.client, deps.config.temporalTaskQueue));

  /** Writes a scheduled job's tasks and record; a failure after takes both back. */
  const insertJob = async (job: JobDoc, tasks: StoredTask[], then: () => Promise<void>): Promise<void> => {
    await writeSlices(job._id, 0, 0, tasks);
    await collections.jobs.insertOne(job);
    try {
      await then();
    } catch (error) {
      await collections.jobs.deleteOne({ _id: job._id }).catch(() => undefined);
      await collections.slices.deleteMany({ job_id: job._id }).catch(() => undefined);
      throw error;
    }
  };

  /**
   * A regular job runs at once: its first run's start (written down first, so a start cut short is
   * found) takes an active-job slot, then writes its tasks, its record and the run.
   */
  const createRegular = async (principal: Principal, job: JobDoc, tasks: StoredTask[], claim?: Claimed): Promise<JobDoc> => {
    const runId = firstRunId(job._id);
    await startRun(principal, job, runId, undefined, claim, {
      take: async () => {
        await writeSlices(job._id, 0, 0, tasks);
        await insertIgnoringDuplicates(collections.jobs, [job]);
      },
      giveBack: async () => {
        await collections.jobs.deleteOne({ _id: job._id, run_count: 0 });
        await collections.slices.deleteMany({ job_id: job._id });
      },
    });
    return { ...job, latest_run_id: runId, run_count: 1 };
  };

  /** A retry that took over a dead create whose job was written: the start of its first run is finished. */
  const resumeRegular = async (principal: Principal, job: JobDoc, claim: Claimed): Promise<JobDoc> => {
    const runId = firstRunId(job._id);
    await startRun(principal, job, runId, undefined, claim);
    return (await collections.jobs.findOne({ _id: job._id })) ?? job;
  };

  /** A scheduled job starts no run: its Temporal Schedule fires them. */
  const createScheduled = async (job: JobDoc, schedule: JobSchedule, tasks: StoredTask[]): Promise<JobDoc> => {
    let next: Date | null = null;
    await insertJob(job, tasks, async () => {
      try {
        await schedules().create(job._id, job.account_id, schedule, 'active');
        next = await schedules().nextFire(job._id, schedule);
      } catch (error) {
        await schedules().remove(job._id).catch(() => undefined);
        throw error;
      }
    });
    await collections.jobs.updateOne({ _id: job._id }, { $set: { next_scheduled_run: next } });
    return { ...job, next_scheduled_run: next };
  };

  const ownScheduledJob = async (principal: Principal, jobId: string): Promise<JobDoc> => {
    const job = await ownJob(principal, jobId);
    if (job.type !== 'scheduled') throw problem('conflict', 'The job is not a scheduled job: it has no schedule.', { members: { reason: 'job_not_scheduled' } });
    return job;
  };

  return {
    ownJob,
    latestRun,
    runs,

    async create(principal: Principal, input: NewJob, idempotencyKey?: string, bodyForKey?: unknown): Promise<{ job: JobDoc; replayed: boolean }> {
      if (input.tasks.length > MAX_TASKS_PER_JOB) throw problem('invalid_argument', `A job holds at most ${MAX_TASKS_PER_JOB} tasks.`);
      const claim = idempotencyKey ? await idempotencyKeys.claim(principal.accountId, idempotencyKey, bodyForKey, () => newId('job')) : undefined;
      if (claim?.kind === 'replay') return { job: await ownJob(principal, claim.resultId), replayed: true };
      if (claim?.kind === 'reused') throw problem('conflict', 'This Idempotency-Key was used with another body.', { members: { reason: 'idempotency_key_conflict' } });
      if (claim?.kind === 'in_flight') throw problem('conflict', 'A request with this Idempotency-Key is still being handled; retry shortly.', { members: { reason: 'idempotency_key_conflict' } });
      const claimed = claim?.kind === 'claimed' ? claim : undefined;
      try {
        const earlier = claimed?.takenOver ? await collections.jobs.findOne({ _id: claimed.recordId }) : null;
        if (earlier && earlier.type === 'regular') {
          const resumed = await resumeRegular(principal, earlier, claimed as Claimed);
          await claimed?.complete(resumed._id);
          return { job: resumed, replayed: false };
        }
        if (earlier) {
          await claimed?.complete(earlier._id);
          return { job: earlier, replayed: false };
        }
        await probeCredits(principal);
        const now = new Date();
        const job: JobDoc = {
          _id: claimed?.recordId || newId('job'),
          account_id: principal.accountId,
          key_id: principal.keyId,
          type: input.schedule ? 'scheduled' : 'regular',
          status: input.status,
          params: input.params,
          external_id: input.external_id ?? null,
          name: input.name ?? null,
          metadata: input.metadata ?? null,
          webhook: input.webhook ?? null,
          schedule: input.schedule ?? null,
          schedule_state: input.schedule ? 'active' : null,
          next_scheduled_run: null,
          task_count: input.tasks.length,
          slice_count: Math.ceil(input.tasks.length / SLICE_SIZE),
          writing: null,
          run_count: 0,
          latest_run_id: null,
          created_at: now,
          updated_at: now,
        };
        const created = input.schedule ? await createScheduled(job, input.schedule, input.tasks) : await createRegular(principal, job, input.tasks, claimed);
        await claimed?.complete(created._id);
        return { job: created, replayed: false };
      } catch (error) {
        if (claimed && (await claimed.owned().catch(() => false))) await claimed.drop().catch(() => undefined);
        throw error;
      }
    },

    /** Replaces a scheduled job's schedule; the run in flight goes on, the new one governs the next fires. */
    async setSchedule(principal: Principal, jobId: string, schedule: JobSchedule): Promise<JobDoc> {
      const job = await ownScheduledJob(principal, jobId);
      await schedules().update(jobId, schedule);
      const next = await schedules().nextFire(jobId, schedule);
      await collections.jobs.updateOne({ _id: jobId }, { $set: { schedule, next_scheduled_run: next, updated_at: new Date() } });
      return { ...job, schedule, next_scheduled_run: next };
    },

    /** Pauses (no fire until resumed; a run in flight goes on) or resumes a scheduled job's fires. */
    async setScheduleState(principal: Principal, jobId: string, state: ScheduleState): Promise<JobDoc> {
      const job = await ownScheduledJob(principal, jobId);
      await schedules().setState(jobId, state);
      const next = await schedules().nextFire(jobId, job.schedule as JobSchedule);
      await collections.jobs.updateOne({ _id: jobId }, { $set: { schedule_state: state, next_scheduled_run: next, updated_at: new Date() } });
      return { ...job, schedule_state: state, next_scheduled_run: next };
    },

    async addTasks(
      principal: Principal,
      jobId: string,
      tasks: StoredTask[],
      lastBatch: boolean,
      idempotency?: { key: string; body: unknown },
    ): Promise<{ job: JobDoc; run: RunView | null; accepted: number }> {
      const claim = idempotency ? await idempotencyKeys.claim(principal.accountId, `tasks:${jobId}:${idempotency.key}`, idempotency.body) : undefined;
      if (claim?.kind === 'replay') {
        const job = await ownJob(principal, jobId);
        return { job, run: await latestRun(job), accepted: Number(claim.resultId) };
      }
      if (claim?.kind === 'reused' || claim?.kind === 'in_flight') {
        throw problem('conflict', 'This Idempotency-Key was used with another body, or that request is still running.', { members: { reason: 'idempotency_key_conflict' } });
      }
      try {
        const added = await this.appendTasks(principal, jobId, tasks, lastBatch);
        if (claim?.kind === 'claimed') await claim.complete(String(added.accepted));
        return added;
      } catch (error) {
        if (claim?.kind === 'claimed') await claim.drop().catch(() => undefined);
        throw error;
      }
    },

    async appendTasks(principal: Principal, jobId: string, tasks: StoredTask[], lastBatch: boolean): Promise<{ job: JobDoc; run: RunView | null; accepted: number }> {
      const owner = randomUUID();
      let job = await ownJob(principal, jobId);
      for (let attempt = 0; ; attempt++) {
        if (job.status !== 'open') throw problem('conflict', 'The job is closed: it takes no more tasks.', { members: { reason: 'job_not_open' } });
        const writing = job.writing && Date.now() - job.writing.since.getTime() < STALE_WRITER_MS;
        if (writing) throw problem('conflict', 'Another submission to this job is still being written; retry in a few seconds.', { members: { reason: 'run_not_terminal' } });
        if (job.task_count + tasks.length > MAX_TASKS_PER_JOB) {
          // Not 429: clients retry those, and this limit does not pass with time.
          throw problem('invalid_argument', `A job holds at most ${MAX_TASKS_PER_JOB} tasks; it has ${job.task_count}.`, { members: { parameter: 'tasks' } });
        }
        const taken = await collections.jobs.updateOne(
          { _id: jobId, status: 'open', task_count: job.task_count, slice_count: job.slice_count, writing: job.writing },
          { $set: { writing: { owner, since: new Date() } } },
        );
        if (taken.modifiedCount === 1) break;
        if (attempt >= 5) throw problem('conflict', 'The job changed while the tasks were being added; retry.', { members: { reason: 'run_not_terminal' } });
        job = await ownJob(principal, jobId);
      }
      const added = await writeSlices(jobId, job.slice_count, job.task_count, tasks);
      const now = new Date();
      const next = {
        task_count: job.task_count + tasks.length,
        slice_count: job.slice_count + added,
        status: lastBatch ? ('closed' as const) : ('open' as const),
      };
      await collections.jobs.updateOne({ _id: jobId, 'writing.owner': owner }, { $set: { ...next, writing: null, updated_at: now } });
      const run = await latestRun(job);
      if (run && !isTerminal(run.run.status)) await signal(run.run._id, TASKS_ADDED_SIGNAL, { sliceCount: next.slice_count, total: next.task_count, lastBatch });
      return { job: { ...job, ...next, writing: null, updated_at: now }, run: run ? await runs.one({ _id: run.run._id }) : null, accepted: tasks.length };
    },

    async close(principal: Principal, jobId: string): Promise<JobDoc> {
      const job = await ownJob(principal, jobId);
      if (job.status === 'open') {
        if (job.writing && Date.now() - job.writing.since.getTime() < STALE_WRITER_MS) {
          throw problem('conflict', 'A submission to this job is still being written; retry in a few seconds.', { members: { reason: 'run_not_terminal' } });
        }
        await collections.jobs.updateOne({ _id: jobId, status: 'open' }, { $set: { status: 'closed', updated_at: new Date() } });
        const run = await latestRun(job);
        if (run && !isTerminal(run.run.status)) await signal(run.run._id, TASKS_ADDED_SIGNAL, { sliceCount: job.slice_count, total: job.task_count, lastBatch: true });
      }
      return ownJob(principal, jobId);
    },

    async pause(principal: Principal, jobId: string): Promise<RunView> {
      const { run } = await this.currentRun(principal, jobId);
      if (isTerminal(run.status)) throw problem('conflict', `The run has ended (${run.status}): there is nothing to pause.`, { members: { reason: 'run_not_stoppable' } });
      const control = await runs.control(run, { pause_state: 'paused' });
      await signal(run._id, PAUSE_SIGNAL);
      return { run, control };
    },

    async resume(principal: Principal, jobId: string): Promise<RunView> {
      const { run } = await this.currentRun(principal, jobId);
      if (isTerminal(run.status)) throw problem('conflict', `The run has ended (${run.status}): there is nothing to resume.`, { members: { reason: 'run_not_stoppable' } });
      const control = await runs.control(run, { pause_state: 'active' });
      await signal(run._id, RESUME_SIGNAL);
      return { run, control };
    },

    async stop(principal: Principal, jobId: string): Promise<RunView> {
      const { run, control } = await this.currentRun(principal, jobId);
      if (isTerminal(run.status) || control?.stop) throw problem('conflict', `The run has already ended or is stopping (${run.status}).`, { members: { reason: 'run_not_stoppable' } });
      return { run, control: await this.stopRun(run, 'stopped') };
    },

    /** Records a stop or a delete of a run and tells its workflow; a run that has ended only records it. */
    async stopRun(run: RunDoc, kind: StopKind): Promise<RunControlDoc> {
      const control = await runs.control(run, { stop: kind });
      if (!isTerminal(run.status)) await signal(run._id, STOP_SIGNAL, kind);
      return control;
    },

    async currentRun(principal: Principal, jobId: string): Promise<RunView> {
      const job = await ownJob(principal, jobId);
      const run = await latestRun(job);
      if (!run) throw problem('conflict', 'The job has no run yet.', { members: { reason: 'no_prior_run' } });
      return run;
    },

    async deleteJob(principal: Principal, jobId: string): Promise<void> {
      const job = await ownJob(principal, jobId);
      // No fire after the delete: the schedule goes first.
      if (job.type === 'scheduled') await schedules().remove(jobId);
      await collections.jobs.updateOne({ _id: jobId }, { $set: { status: 'deleted', updated_at: new Date() } });
      for (const view of await runs.ofJob(jobId, Number.MAX_SAFE_INTEGER, 10_000)) await this.stopRun(view.run, 'deleted');
    },

    async deleteRun(principal: Principal, jobId: string, runId: string): Promise<void> {
      await ownJob(principal, jobId);
      const view = await runs.one({ _id: runId, job_id: jobId });
      if (!view || isDeleted(view)) throw problem('not_found', `No run ${runId} in job ${jobId}.`);
      const children = [...(await runs.byIds((await collections.runs.find({ rerun_of: runId }, { projection: { _id: 1 } }).toArray()).map((doc) => doc._id))).values()];
      const child = children.find((each) => !isDeleted(each));
      if (child) throw problem('conflict', `Run ${child.run._id} reruns this run and reads its results: delete it first.`, { members: { reason: 'run_has_descendants' } });
      await this.stopRun(view.run, 'deleted');
    },

    async rerun(principal: Principal, jobId: string, statuses: TaskStatus[] | undefined, idempotencyKey?: string): Promise<{ job: JobDoc; run: RunView; retried: number; inherited: number }> {
      const claim = idempotencyKey ? await idempotencyKeys.claim(principal.accountId, `rerun:${jobId}:${idempotencyKey}`, { statuses: statuses ?? null }, () => newId('run')) : undefined;
      if (claim?.kind === 'replay') {
        const job = await ownJob(principal, jobId);
        const view = await runs.one({ _id: claim.resultId });
        if (view) return { job, run: view, ...(await countRerun(deps.db, job, view.run.rerun_of, view.run.rerun_statuses ?? undefined)) };
      }
      if (claim?.kind === 'reused' || claim?.kind === 'in_flight') throw problem('conflict', 'This Idempotency-Key was used with another request, or that request is still running.', { members: { reason: 'idempotency_key_conflict' } });
      const claimed = claim?.kind === 'claimed' ? claim : undefined;
      try {
        const job = await ownJob(principal, jobId);
        const earlier = claimed?.takenOver ? await runs.one({ _id: claimed.recordId, job_id: jobId }) : null;
        if (earlier && claimed) {
          // A rerun whose request died after writing its run: its start is finished, its checks were made.
          const run = await startRun(principal, job, earlier.run._id, undefined, claimed);
          await claimed.complete(run._id);
          return { job: await ownJob(principal, jobId), run: { run, control: earlier.control }, ...(await countRerun(deps.db, job, run.rerun_of, run.rerun_statuses ?? undefined)) };
        }
        if (job.status !== 'closed') throw problem('conflict', 'An open job cannot be rerun: close it first.', { members: { reason: 'job_not_open' } });
        const latest = await latestRun(job);
        // A scheduled job that has not fired yet is fired by hand: a full run.
        if (!latest && (job.type !== 'scheduled' || statuses)) throw problem('conflict', 'The job has no run to rerun.', { members: { reason: 'no_prior_run' } });
        const previous = latest?.run;
        if (latest && previous && (!isTerminal(previous.status) || isDeleted(latest))) {
          throw problem('conflict', `The latest run is ${runStatusOf(latest)}: a rerun starts after it ends.`, { members: { reason: 'run_not_terminal' } });
        }
        const counts = await countRerun(deps.db, job, statuses && previous ? previous._id : null, statuses);
        if (statuses && counts.retried === 0) throw problem('conflict', `No task of run ${previous?._id ?? ''} has status ${statuses.join(' or ')}.`, { members: { reason: 'no_matching_tasks' } });
        await probeCredits(principal);
        const runId = claimed?.recordId || newId('run');
        const run = await startRun(principal, job, runId, statuses && previous ? { of: previous._id, statuses } : undefined, claimed);
        await claimed?.complete(runId);
        return { job: await ownJob(principal, jobId), run: { run, control: null }, ...counts };
      } catch (error) {
        if (claimed && (await claimed.owned().catch(() => false))) await claimed.drop().catch(() => undefined);
        throw error;
      }
    },

    async setWebhook(principal: Principal, jobId: string, webhook: WebhookSetting | null): Promise<JobDoc> {
      await ownJob(principal, jobId);
      await collections.jobs.updateOne({ _id: jobId }, { $set: { webhook, updated_at: new Date() } });
      return ownJob(principal, jobId);
    },
  };
}

export type BatchCommands = ReturnType<typeof createBatchCommands>;

export { batchJobChecker, isTerminal, newRunRecord, runInputOf, runSearchAttributes, TERMINAL_RUN };
