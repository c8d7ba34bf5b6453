/** Batch jobs: create (regular or scheduled), list, read, delete, add tasks, close, and a scheduled job's schedule. */
import { type NewJob } from '../../core/batch/jobs';
import { presentJob, presentRun } from '../../core/batch/read';
import { parseSchedule, type JobSchedule, type ScheduleState } from '../../core/batch/schedules';
import type { StoredTask } from '../../core/batch/store';
import { problem } from '../../core/errors';
import { principalOf } from '../auth/authenticate';
import type { Route } from '../http/routes';
import type { BatchContext } from './context';
import { parseCsvTasks } from './inputs';
import { ADD_BODY, CREATE_BODY, errors, json, LIST_QUERY, PUT_SCHEDULE, SCHEDULE_STATE_BODY } from './schemas';
import { checkJobParams, checkTasks, paramStrings, type TaskInput } from './validate';

export function jobRoutes(c: BatchContext): Route[] {
  const { deps, commands, collections, common, checkWebhook, jobView, page, scheduleRules } = c;
  return [
    {
      ...common,
      method: 'POST',
      path: '/v1/jobs',
      operationId: 'createJob',
      summary: 'Create a job of URLs to fetch; a closed job starts its run at once.',
      description: 'Header `Idempotency-Key`: the same key and body return the same job; another body is 409. Every task is fetched like GET /v1/ with the job’s `zenrows_params` (a task’s own override them).',
      body: CREATE_BODY,
      responses: {
        201: json('The job, its first run and the tasks accepted'),
        ...errors,
        402: { description: 'No credits available (payment_required)' },
        409: { description: 'Idempotency-Key reused with another body, or still in flight (conflict)' },
        429: { description: 'The account runs its active jobs already (quota_exceeded, Retry-After: 30)' },
      },
      async handler(ctx, input) {
        const principal = principalOf(ctx);
        const body = input.body as {
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
        };
        const params = paramStrings(body.zenrows_params);
        checkJobParams(params);
        const status = body.status ?? 'closed';
        const scheduled = body.type === 'scheduled';
        if (scheduled && !body.schedule) throw problem('invalid_argument', 'A scheduled job needs `schedule`.', { members: { parameter: 'schedule' } });
        if (scheduled && status === 'open') throw problem('invalid_argument', 'A scheduled job is closed: its tasks run at every fire.', { members: { parameter: 'status' } });
        // The clients' model: `schedule` is ignored on other jobs.
        const schedule = scheduled && body.schedule ? parseSchedule(body.schedule, scheduleRules(principal)) : undefined;
        if (body.tasks && body.file_input_id) throw problem('invalid_argument', 'Send `tasks` or `file_input_id`, not both.', { members: { parameter: 'file_input_id' } });
        let tasks: StoredTask[];
        if (body.file_input_id) {
          if (status !== 'closed') throw problem('conflict', 'A CSV input is for closed jobs only.', { members: { reason: 'file_input_unsupported_for_job_type' } });
          tasks = checkTasks(await parseCsvTasks(deps.db.db, principal.accountId, body.file_input_id), params);
        } else {
          tasks = checkTasks(body.tasks ?? [], params);
        }
        if (scheduled && tasks.length === 0) throw problem('invalid_argument', 'A scheduled job needs at least one task.', { members: { parameter: 'tasks' } });
        const webhook = await checkWebhook(principal, body.webhook);
        const job: NewJob = {
          status,
          params,
          tasks,
          ...(schedule ? { schedule } : {}),
          ...(body.external_id ? { external_id: body.external_id } : {}),
          ...(body.name ? { name: body.name } : {}),
          ...(body.metadata ? { metadata: body.metadata } : {}),
          ...(webhook ? { webhook } : {}),
        };
        const key = ctx.headers['idempotency-key'] === undefined ? undefined : ctx.get('Idempotency-Key');
        if (key !== undefined && (key.length === 0 || key.length > 255)) throw problem('invalid_argument', 'Idempotency-Key must be 1 to 255 characters.', { members: { parameter: 'Idempotency-Key' } });
        // Work accepted while no worker runs would not move (readiness.ts): refused with 503 instead.
        await deps.readiness.requireWorker();
        const created = await commands.create(principal, job, key, input.body);
        const run = await commands.latestRun(created.job);
        ctx.status = created.replayed ? 200 : 201;
        ctx.set('Location', `/v1/jobs/${created.job._id}`);
        ctx.body = { job_id: created.job._id, status: created.job.status, latest_run: run ? presentRun(run, created.job) : null, accepted_tasks: created.job.task_count, webhook: created.job.webhook };
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/v1/jobs',
      operationId: 'listJobs',
      summary: 'The account’s jobs, newest first.',
      query: LIST_QUERY,
      responses: { 200: json('`{jobs, next_cursor}`'), ...errors },
      async handler(ctx, input) {
        const principal = principalOf(ctx);
        const limit = (input.query.limit as number | undefined) ?? 20;
        const cursor = input.query.cursor as string | undefined;
        const status = input.query.status as string | undefined;
        const filter: Record<string, unknown> = { account_id: principal.accountId, status: status ?? { $ne: 'deleted' } };
        if (cursor !== undefined) {
          const after = Buffer.from(cursor, 'base64url').toString();
          if (!/^job_[0-9a-z]{26}$/.test(after)) throw problem('invalid_argument', 'The cursor is not one this endpoint gave.', { members: { parameter: 'cursor' } });
          filter._id = { $lt: after };
        }
        if (input.query.type !== undefined) filter.type = input.query.type;
        const docs = await collections.jobs.find(filter).sort({ _id: -1 }).limit(limit + 1).toArray();
        const { items, next_cursor } = page(docs, limit, (doc) => Buffer.from(doc._id).toString('base64url'));
        const runIds = items.map((job) => job.latest_run_id).filter((id): id is string => id !== null);
        const runs = await commands.runs.byIds(runIds);
        ctx.body = { jobs: items.map((job) => presentJob(job, job.latest_run_id ? (runs.get(job.latest_run_id) ?? null) : null)), next_cursor };
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/v1/jobs/{job_id}',
      operationId: 'getJob',
      summary: 'A job with its latest run and progress.',
      responses: { 200: json('The job'), ...errors },
      async handler(ctx, input) {
        ctx.body = await jobView(await commands.ownJob(principalOf(ctx), input.params.job_id ?? ''));
      },
    },
    {
      ...common,
      method: 'DELETE',
      path: '/v1/jobs/{job_id}',
      operationId: 'deleteJob',
      summary: 'Delete a job: a running run stops, and its runs and results are no longer served.',
      responses: { 204: { description: 'Deleted' }, ...errors },
      async handler(ctx, input) {
        await commands.deleteJob(principalOf(ctx), input.params.job_id ?? '');
        ctx.status = 204;
      },
    },
    {
      ...common,
      method: 'POST',
      path: '/v1/jobs/{job_id}/tasks',
      operationId: 'addTasks',
      summary: 'Add up to 10,000 tasks to an open job; `last_batch: true` closes it.',
      body: ADD_BODY,
      responses: {
        200: json('`{accepted_tasks, job_status, latest_run}`'),
        ...errors,
        409: { description: 'The job is closed, or another submission is still being written: retry (conflict)' },
      },
      async handler(ctx, input) {
        const principal = principalOf(ctx);
        const body = input.body as { tasks: TaskInput[]; last_batch?: boolean | null };
        const job = await commands.ownJob(principal, input.params.job_id ?? '');
        const tasks = checkTasks(body.tasks, job.params);
        const key = ctx.headers['idempotency-key'] === undefined ? undefined : ctx.get('Idempotency-Key');
        const added = await commands.addTasks(principal, job._id, tasks, body.last_batch === true, key === undefined ? undefined : { key, body: input.body });
        ctx.body = { accepted_tasks: added.accepted, job_status: added.job.status, latest_run: added.run ? presentRun(added.run, added.job) : null };
      },
    },
    {
      ...common,
      method: 'POST',
      path: '/v1/jobs/{job_id}/close',
      operationId: 'closeJob',
      summary: 'Close an open job: its run finishes the tasks it has and ends.',
      responses: { 200: json('The job'), ...errors, 409: { description: 'A submission is still being written (conflict)' } },
      async handler(ctx, input) {
        ctx.body = await jobView(await commands.close(principalOf(ctx), input.params.job_id ?? ''));
      },
    },
    {
      ...common,
      method: 'PUT',
      path: '/v1/jobs/{job_id}/schedule',
      operationId: 'putJobSchedule',
      summary: 'Replace a scheduled job’s schedule; a run in flight goes on, the new schedule governs the next fires.',
      body: PUT_SCHEDULE,
      responses: { 200: json('The job'), ...errors, 409: { description: 'Not a scheduled job (conflict)' } },
      async handler(ctx, input) {
        const schedule = parseSchedule(input.body as JobSchedule, scheduleRules(principalOf(ctx)));
        ctx.body = await jobView(await commands.setSchedule(principalOf(ctx), input.params.job_id ?? '', schedule));
      },
    },
    {
      ...common,
      method: 'POST',
      path: '/v1/jobs/{job_id}/schedule/state',
      operationId: 'setJobScheduleState',
      summary: 'Pause a scheduled job’s fires (`paused`; a run in flight goes on) or resume them (`active`).',
      body: SCHEDULE_STATE_BODY,
      responses: { 200: json('The job'), ...errors, 409: { description: 'Not a scheduled job (conflict)' } },
      async handler(ctx, input) {
        const state = (input.body as { schedule_state: ScheduleState }).schedule_state;
        ctx.body = await jobView(await commands.setScheduleState(principalOf(ctx), input.params.job_id ?? '', state));
      },
    },
  ];
}
