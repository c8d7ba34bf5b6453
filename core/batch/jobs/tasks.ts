/**
 * An open job's tasks: added (up to 10,000 a call, under an optional Idempotency-Key), and the job
 * closed. A call takes the job's writer mark (compare-and-set) while it writes its slices, then counts
 * them, lets the mark go and signals the run.
 */
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../accounts';
import { problem } from '../../../base/errors';
import { idempotent } from '../../jobs/idempotent';
import { TASKS_ADDED_SIGNAL } from '../../jobs/workflow-names';
import { batchIdempotencyWords, STALE_WRITER_MS, type CommandContext } from '../context';
import { isTerminal } from '../runs/records';
import type { RunView } from '../runs/view';
import { MAX_TASKS_PER_JOB, type JobDoc } from '../store';
import { checkExtractPlan, checkTasksYielding, type TaskInput } from './task-input';

export interface Added {
  job: JobDoc;
  run: RunView | null;
  accepted: number;
}

/** Why a job takes no tasks: a scheduled job's are a template; a regular one has received its last batch. */
function closedRefusal(job: JobDoc): Error {
  if (job.type === 'scheduled') return problem('job_not_open', 'A scheduled job’s tasks are a template: it takes no more tasks.', { members: { reason: 'job_not_open' } });
  return problem('last_batch_received', 'The job is closed: its last batch was received, so it takes no more tasks.', { members: { reason: 'last_batch_received' } });
}

const stillWriting = () => problem('run_not_terminal', 'Another submission to this job is still being written; retry in a few seconds.', { members: { reason: 'run_not_terminal' } });

export function taskCommands(c: CommandContext) {
  const { store } = c;

  const append = async (principal: Principal, jobId: string, job: JobDoc, tasks: TaskInput[], lastBatch: boolean): Promise<Added> => {
    const stored = await checkTasksYielding(tasks, job.params);
    checkExtractPlan(c.deps.accounts.plans, principal, job.params, stored);
    const owner = randomUUID();
    for (let attempt = 0; ; attempt++) {
      if (job.status !== 'open') throw closedRefusal(job);
      if (job.writing && Date.now() - job.writing.since.getTime() < STALE_WRITER_MS) throw stillWriting();
      if (job.task_count + stored.length > MAX_TASKS_PER_JOB) {
        // Not 429: clients retry those, and this limit does not pass with time.
        throw problem('invalid_argument', `A job holds at most ${MAX_TASKS_PER_JOB} tasks; it has ${job.task_count}.`, { members: { parameter: 'tasks' } });
      }
      const taken = await store.jobs.updateOne(
        { _id: jobId, status: 'open', task_count: job.task_count, slice_count: job.slice_count, writing: job.writing },
        { $set: { writing: { owner, since: new Date() } } },
      );
      if (taken.modifiedCount === 1) break;
      if (attempt >= 5) throw problem('run_not_terminal', 'The job changed while the tasks were being added; retry.', { members: { reason: 'run_not_terminal' } });
      job = await c.ownJob(principal, jobId);
    }
    const added = await c.writeSlices(jobId, job.slice_count, job.task_count, stored);
    const now = new Date();
    const next = { task_count: job.task_count + stored.length, slice_count: job.slice_count + added, status: lastBatch ? ('closed' as const) : ('open' as const) };
    await store.jobs.updateOne({ _id: jobId, 'writing.owner': owner }, { $set: { ...next, writing: null, updated_at: now } });
    const run = await c.latestRun(job);
    if (run && !isTerminal(run.run.status)) await c.signal(run.run._id, TASKS_ADDED_SIGNAL, { sliceCount: next.slice_count, total: next.task_count, lastBatch });
    return { job: { ...job, ...next, writing: null, updated_at: now }, run: run ? await c.runs.one({ _id: run.run._id }) : null, accepted: stored.length };
  };

  return {
    async add(principal: Principal, jobId: string, tasks: TaskInput[], lastBatch: boolean, idempotency?: { key: string; body: unknown }): Promise<Added> {
      const job = await c.ownJob(principal, jobId);
      const added = await idempotent(
        c.idempotencyKeys,
        batchIdempotencyWords,
        { accountId: principal.accountId, key: idempotency?.key, scope: `tasks:${jobId}`, body: idempotency?.body },
        {
          replay: async (accepted) => {
            const now = await c.ownJob(principal, jobId);
            return { job: now, run: await c.latestRun(now), accepted: Number(accepted) };
          },
          run: async () => {
            const value = await append(principal, jobId, job, tasks, lastBatch);
            return { value, resultId: String(value.accepted) };
          },
        },
      );
      return added.value;
    },

    async close(principal: Principal, jobId: string): Promise<JobDoc> {
      const job = await c.ownJob(principal, jobId);
      if (job.status === 'open') {
        if (job.writing && Date.now() - job.writing.since.getTime() < STALE_WRITER_MS) throw stillWriting();
        await store.jobs.updateOne({ _id: jobId, status: 'open' }, { $set: { status: 'closed', updated_at: new Date() } });
        const run = await c.latestRun(job);
        if (run && !isTerminal(run.run.status)) await c.signal(run.run._id, TASKS_ADDED_SIGNAL, { sliceCount: job.slice_count, total: job.task_count, lastBatch: true });
      }
      return c.ownJob(principal, jobId);
    },
  };
}
