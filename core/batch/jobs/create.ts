/**
 * Creating a job: the creation rules (a scheduled job's schedule and tasks, a CSV input for closed
 * jobs only), the tasks checked, the webhook checked, then under the Idempotency-Key:
 *
 *   claim (reserves the job id) ─> credits probe ─> regular: startJob (active-job slot ─> slices, job,
 *   run ─> workflow `run-<id>`) | scheduled: slices, job ─> Temporal Schedule
 *
 * A retry that took over a dead create whose job was written finishes that job's start.
 */
import type { Principal } from '../../accounts';
import { insertIgnoringDuplicates } from '../../../base/db';
import { problem } from '../../../base/errors';
import { newId } from '../../../base/ids';
import type { Claimed } from '../../jobs/idempotency';
import { idempotent } from '../../jobs/idempotent';
import { batchIdempotencyWords, type CommandContext } from '../context';
import { inputTasks } from '../inputs/tasks';
import type { RunView } from '../runs/view';
import { scheduledJobStates, scheduleRulesFor } from '../schedules/limits';
import { parseSchedule, type JobSchedule } from '../schedules/parse';
import { MAX_TASKS_PER_JOB, SLICE_SIZE, type BatchTask, type JobDoc } from '../store';
import { checkExtractPlan, checkJobParams, checkTasksYielding, paramStrings, type TaskInput } from './task-input';
import type { WebhookCommands } from './webhook';

/** A create request as the route's schema validated it. */
export interface CreateJobRequest {
  type?: 'regular' | 'scheduled';
  schedule?: JobSchedule;
  status?: 'open' | 'closed';
  zenrows_params?: Record<string, unknown>;
  tasks?: TaskInput[];
  file_input_id?: string;
  external_id?: string;
  name?: string;
  metadata?: Record<string, string>;
  webhook?: { url: string; signature?: boolean };
}

export interface Created {
  job: JobDoc;
  run: RunView | null;
  replayed: boolean;
}

export function createJobCommand(c: CommandContext, webhooks: WebhookCommands) {
  const { store, deps } = c;

  /** Writes a scheduled job's tasks and record; a failure after takes both back. */
  const insertJob = async (job: JobDoc, tasks: BatchTask[], then: () => Promise<void>): Promise<void> => {
    await c.writeSlices(job._id, 0, 0, tasks);
    await store.jobs.insertOne(job);
    try {
      await then();
    } catch (error) {
      await store.jobs.deleteOne({ _id: job._id }).catch(() => undefined);
      await store.slices.deleteMany({ job_id: job._id }).catch(() => undefined);
      throw error;
    }
  };

  /** A regular job runs at once: its first run's start takes an active-job slot, then writes its tasks, its record and the run. */
  const createRegular = async (principal: Principal, job: JobDoc, tasks: BatchTask[], claim?: Claimed): Promise<JobDoc> => {
    const runId = c.firstRunId(job._id);
    await c.startRun(principal, job, runId, undefined, claim, {
      take: async () => {
        await c.writeSlices(job._id, 0, 0, tasks);
        await insertIgnoringDuplicates(store.jobs, [job]);
      },
      giveBack: async () => {
        await store.jobs.deleteOne({ _id: job._id, run_count: 0 });
        await store.slices.deleteMany({ job_id: job._id });
      },
    });
    return { ...job, latest_run_id: runId, run_count: 1 };
  };

  /** A scheduled job starts no run: its Temporal Schedule fires them. */
  const createScheduled = async (job: JobDoc, schedule: JobSchedule, tasks: BatchTask[]): Promise<JobDoc> => {
    let next: Date | null = null;
    await insertJob(job, tasks, async () => {
      try {
        await c.schedules().create(job._id, job.account_id, schedule, 'active');
        next = await c.schedules().nextFire(job._id, schedule);
      } catch (error) {
        await c.schedules().remove(job._id).catch(() => undefined);
        throw error;
      }
    });
    await store.jobs.updateOne({ _id: job._id }, { $set: { next_scheduled_run: next } });
    return { ...job, next_scheduled_run: next };
  };

  /** The job as the request asks it, every rule checked: nothing is written before. */
  const shape = async (principal: Principal, body: CreateJobRequest) => {
    const params = paramStrings(body.zenrows_params);
    checkJobParams(params);
    const status = body.status ?? 'closed';
    const scheduled = body.type === 'scheduled';
    if (scheduled && !body.schedule) throw problem('invalid_argument', 'A scheduled job needs `schedule`.', { members: { parameter: 'schedule' } });
    if (scheduled && status === 'open') throw problem('invalid_argument', 'A scheduled job is closed: its tasks run at every fire.', { members: { parameter: 'status' } });
    // The clients' model: `schedule` is ignored on other jobs.
    const schedule = scheduled && body.schedule ? parseSchedule(body.schedule, scheduleRulesFor(deps.config, principal)) : undefined;
    if (body.tasks && body.file_input_id) throw problem('invalid_argument', 'Send `tasks` or `file_input_id`, not both.', { members: { parameter: 'file_input_id' } });
    let tasks: BatchTask[];
    if (body.file_input_id) {
      if (status !== 'closed') throw problem('file_input_unsupported_for_job_type', 'A CSV input is for closed jobs only.', { members: { reason: 'file_input_unsupported_for_job_type' } });
      tasks = await checkTasksYielding(await inputTasks(store, principal.accountId, body.file_input_id), params);
    } else {
      tasks = await checkTasksYielding(body.tasks ?? [], params);
    }
    checkExtractPlan(c.deps.accounts.plans, principal, params, tasks);
    if (scheduled && tasks.length === 0) throw problem('invalid_argument', 'A scheduled job needs at least one task.', { members: { parameter: 'tasks' } });
    if (tasks.length > MAX_TASKS_PER_JOB) throw problem('invalid_argument', `A job holds at most ${MAX_TASKS_PER_JOB} tasks.`);
    const webhook = await webhooks.check(principal, body.webhook);
    return { status, params, tasks, schedule, webhook };
  };

  /** `ready` runs once the request is found valid, before anything is written (the API refuses work no worker would move). */
  return async function create(principal: Principal, body: CreateJobRequest, idempotencyKey: string | undefined, ready?: () => Promise<void>): Promise<Created> {
    // A scheduled job refused a moment ago is refused again from memory, before any database work.
    if (body.type === 'scheduled') c.deps.accounts.holdings.refusedNow(principal.accountId, 'scheduledJobs');
    const input = await shape(principal, body);
    await ready?.();
    const created = await idempotent(
      c.idempotencyKeys,
      batchIdempotencyWords,
      { accountId: principal.accountId, key: idempotencyKey, body, reserve: () => newId('job') },
      {
        replay: async (jobId) => c.ownJob(principal, jobId),
        run: async (claim) => {
          const earlier = claim?.takenOver ? await store.jobs.findOne({ _id: claim.recordId }) : null;
          if (earlier && earlier.type === 'regular' && claim) {
            await c.startRun(principal, earlier, c.firstRunId(earlier._id), undefined, claim);
            const resumed = (await store.jobs.findOne({ _id: earlier._id })) ?? earlier;
            return { value: resumed, resultId: resumed._id };
          }
          if (earlier) return { value: earlier, resultId: earlier._id };
          const jobId = claim?.recordId || newId('job');
          // A scheduled job holds one of the account's `scheduled_jobs` slots (limit-gate.ts): concurrent
          // creations in any number of processes cannot all take the last place. The slots are the
          // count: no query over the account's jobs (on FerretDB it would read every account's).
          if (input.schedule) {
            const holder = { id: jobId, states: (ids: string[]) => scheduledJobStates(store, ids) };
            return c.deps.accounts.holdings.admit(principal, 'scheduledJobs', holder, () => make(principal, jobId, input, body, claim));
          }
          return make(principal, jobId, input, body, claim);
        },
      },
    );
    return { job: created.value, run: await c.latestRun(created.value), replayed: created.replayed };
  };

  /** The job written and started (regular) or scheduled, once the request is found valid. */
  async function make(principal: Principal, jobId: string, input: Awaited<ReturnType<typeof shape>>, body: CreateJobRequest, claim: Claimed | undefined) {
    await c.probeCredits(principal);
    const now = new Date();
    const job: JobDoc = {
      _id: jobId,
      account_id: principal.accountId,
      key_id: principal.keyId,
      type: input.schedule ? 'scheduled' : 'regular',
      status: input.status,
      params: input.params,
      external_id: body.external_id ?? null,
      name: body.name ?? null,
      metadata: body.metadata ?? null,
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
    const made = input.schedule ? await createScheduled(job, input.schedule, input.tasks) : await createRegular(principal, job, input.tasks, claim);
    return { value: made, resultId: made._id };
  }
}
