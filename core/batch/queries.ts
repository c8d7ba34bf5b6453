/**
 * Batch reads for the API: an account's jobs, a job's runs, a run, its results, a task's body and
 * history, each checked against the account first. They answer domain records; how they read is the
 * API's (api/batch/present*.ts).
 */
import type { Principal } from '../accounts';
import { problem } from '../../base/errors';
import type { CommandContext } from './context';
import { readBody } from './results/bodies';
import { batchCursors } from './results/cursors';
import { resultExpired } from './results/expiry';
import { findTask, readResultPage, type ResultFilter, type ResultPage } from './results/page';
import { isDeleted, type RunView } from './runs/view';
import { taskPlace, type JobDoc, type RunDoc, type TaskResult } from './store';

/** What a successful task's body is served as. */
export interface TaskBody {
  contentType: string;
  body: Buffer;
}

/** What one credit costs the account: results show their spend in both. */
const perCredit = (principal: Principal): number => (principal.plan.credits > 0 ? principal.plan.price / principal.plan.credits : 0);

export function batchQueries(c: CommandContext) {
  const { store, deps } = c;

  const viewOf = async (job: JobDoc, runId: string | undefined): Promise<RunView> => {
    const view = runId ? await c.runs.one({ _id: runId, job_id: job._id }) : await c.latestRun(job);
    if (!view || isDeleted(view)) throw problem('not_found', runId ? `No run ${runId} in job ${job._id}.` : `Job ${job._id} has no run yet.`);
    return view;
  };

  const taskOf = async (job: JobDoc, run: RunDoc, taskId: string) => {
    const place = taskPlace(taskId);
    const found = place ? await findTask(store, job, run, place) : undefined;
    if (!found) throw problem('not_found', `No task ${taskId} in job ${job._id}.`);
    return found;
  };

  /**
   * A task's body: 409 task_not_ready when it has none, 410 result_expired when the run's retention
   * window has passed or the body is no longer stored.
   */
  const bodyOf = async (job: JobDoc, run: RunDoc, taskId: string): Promise<TaskBody> => {
    const found = await taskOf(job, run, taskId);
    const { item } = found;
    if (!item || item.status !== 'successful' || item.fetchedBy === undefined) {
      throw problem('task_not_ready', `Task ${taskId} has no body: it is ${item?.status ?? 'pending'}.`, { members: { reason: 'task_not_ready' } });
    }
    const expired = (): never => {
      const days = deps.config.resultsRetentionDays;
      throw problem('result_expired', `The result of task ${taskId} is past the run's ${days}-day retention window and is no longer kept.`, { members: { reason: 'result_expired' } });
    };
    if (resultExpired(run, deps.config.resultsRetentionDays)) return expired();
    const body = await readBody(store.db, run._id, found.slice, found.seq - found.slice.first, item);
    if (!body) return expired();
    return { contentType: item.contentType ?? 'application/octet-stream', body };
  };

  return {
    /** A job's latest run (null before its first). */
    latest: (job: JobDoc): Promise<RunView | null> => c.latestRun(job),

    /** The job with its latest run, as the clients read it. */
    async job(principal: Principal, jobId: string) {
      const job = await c.ownJob(principal, jobId);
      return { job, latest: await c.latestRun(job) };
    },

    /** A page of the account's jobs, newest first, each with its latest run. */
    async listJobs(principal: Principal, query: { limit: number; cursor?: string; status?: string; type?: string }): Promise<{ jobs: Array<{ job: JobDoc; latest: RunView | null }>; nextCursor: string | null }> {
      const filter: Record<string, unknown> = { account_id: principal.accountId, status: query.status ?? { $ne: 'deleted' } };
      if (query.cursor !== undefined) filter._id = { $lt: batchCursors.jobs.decode(principal.accountId, query.cursor) };
      if (query.type !== undefined) filter.type = query.type;
      const docs = await store.jobs.find(filter).sort({ _id: -1 }).limit(query.limit + 1).toArray();
      const items = docs.slice(0, query.limit);
      const last = items[items.length - 1];
      const runs = await c.runs.byIds(items.map((job) => job.latest_run_id).filter((id): id is string => id !== null));
      return {
        jobs: items.map((job) => ({ job, latest: job.latest_run_id ? (runs.get(job.latest_run_id) ?? null) : null })),
        nextCursor: docs.length > query.limit && last ? batchCursors.jobs.encode(principal.accountId, last._id) : null,
      };
    },

    /** A page of a job's runs, newest first. */
    async listRuns(principal: Principal, jobId: string, query: { limit: number; cursor?: string }) {
      const job = await c.ownJob(principal, jobId);
      const before = query.cursor === undefined ? Number.MAX_SAFE_INTEGER : batchCursors.runs.decode(job._id, query.cursor);
      const views = await c.runs.ofJob(job._id, before, query.limit + 1);
      const items = views.slice(0, query.limit);
      const last = items[items.length - 1];
      return { job, runs: items, nextCursor: views.length > query.limit && last ? batchCursors.runs.encode(job._id, last.run.run_sequence) : null };
    },

    /** One run of the job (its latest without `runId`). */
    async run(principal: Principal, jobId: string, runId: string | undefined): Promise<{ job: JobDoc; view: RunView }> {
      const job = await c.ownJob(principal, jobId);
      return { job, view: await viewOf(job, runId) };
    },

    /** A page of a run's results (the job's latest run without `runId`), with what a credit costs the account. */
    async results(principal: Principal, jobId: string, runId: string | undefined, query: { status: ResultFilter; cursor?: string }): Promise<ResultPage & { job: JobDoc; run: RunDoc; perCredit: number }> {
      const job = await c.ownJob(principal, jobId);
      const { run } = await viewOf(job, runId);
      const from = query.cursor === undefined ? 0 : batchCursors.results.decode(run._id, query.cursor);
      const page = await readResultPage(store, job, run, query.status, from, resultExpired(run, deps.config.resultsRetentionDays));
      return { ...page, job, run, perCredit: perCredit(principal) };
    },

    async taskBody(principal: Principal, jobId: string, runId: string | undefined, taskId: string): Promise<TaskBody> {
      const job = await c.ownJob(principal, jobId);
      return bodyOf(job, (await viewOf(job, runId)).run, taskId);
    },

    /** A task's body through its capability link: undefined when the job or run is gone. */
    async linkedTaskBody(jobId: string, runId: string, taskId: string): Promise<TaskBody | undefined> {
      const job = await store.jobs.findOne({ _id: jobId });
      const view = await c.runs.one({ _id: runId, job_id: jobId });
      if (!job || !view || job.status === 'deleted' || isDeleted(view)) return undefined;
      return bodyOf(job, view.run, taskId);
    },

    /** A task's result in the run, its attempts with it, and what a credit costs the account. */
    async taskHistory(principal: Principal, jobId: string, runId: string | undefined, taskId: string): Promise<{ item: TaskResult | undefined; perCredit: number }> {
      const job = await c.ownJob(principal, jobId);
      const found = await taskOf(job, (await viewOf(job, runId)).run, taskId);
      return { item: found.item, perCredit: perCredit(principal) };
    },
  };
}
