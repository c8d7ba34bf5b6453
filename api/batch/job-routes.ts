/** Batch jobs: create (regular or scheduled), list, read, delete, add tasks, close, and a scheduled job's schedule. */
import type { CreateJobRequest, JobSchedule, ScheduleState, TaskInput } from '../../core/batch/commands';
import { principalOf } from '../auth/authenticate';
import type { Route } from '../http/routes';
import type { BatchContext } from './context';
import { presentJob, presentRun } from './present';
import { ADDED, CREATED, JOB, JOBS_PAGE } from './response-schemas';
import { ADD_BODY, CREATE_BODY, errors, json, LIST_QUERY, PUT_SCHEDULE, SCHEDULE_STATE_BODY } from './schemas';

export function jobRoutes(c: BatchContext): Route[] {
  const { deps, commands, common, idempotencyKeyOf } = c;
  /** A job as the clients read it, with its latest run. */
  const present = async (job: Parameters<typeof presentJob>[0]) => presentJob(job, await commands.query.latest(job));
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
        201: json('The job, its first run and the tasks accepted', CREATED),
        200: json('The job this Idempotency-Key created before', CREATED),
        ...errors,
        402: { description: 'No credits available (payment_required)' },
        409: { description: 'Idempotency-Key reused with another body, or still in flight (idempotency_key_conflict); CSV input not uploaded or not for this job (file_input_not_uploaded, file_input_unsupported_for_job_type)' },
        429: { description: 'The account runs its active jobs already (quota_exceeded, Retry-After: 30)' },
      },
      async handler(ctx, input) {
        // Work accepted while no worker runs would not move (readiness.ts): refused with 503 instead, once the request is found valid.
        const created = await commands.create(principalOf(ctx), input.body as CreateJobRequest, idempotencyKeyOf(ctx), () => deps.readiness.requireWorker());
        ctx.status = created.replayed ? 200 : 201;
        ctx.set('Location', `/v1/jobs/${created.job._id}`);
        ctx.body = { job_id: created.job._id, status: created.job.status, latest_run: created.run ? presentRun(created.run, created.job) : null, accepted_tasks: created.job.task_count, webhook: created.job.webhook };
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/v1/jobs',
      operationId: 'listJobs',
      summary: 'The account’s jobs, newest first.',
      query: LIST_QUERY,
      responses: { 200: json('`{jobs, next_cursor}`', JOBS_PAGE), ...errors },
      async handler(ctx, input) {
        const page = await commands.query.listJobs(principalOf(ctx), {
          limit: (input.query.limit as number | undefined) ?? 20,
          cursor: input.query.cursor as string | undefined,
          status: input.query.status as string | undefined,
          type: input.query.type as string | undefined,
        });
        ctx.body = { jobs: page.jobs.map(({ job, latest }) => presentJob(job, latest)), next_cursor: page.nextCursor };
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/v1/jobs/{job_id}',
      operationId: 'getJob',
      summary: 'A job with its latest run and progress.',
      responses: { 200: json('The job', JOB), ...errors },
      async handler(ctx, input) {
        const { job, latest } = await commands.query.job(principalOf(ctx), input.params.job_id ?? '');
        ctx.body = presentJob(job, latest);
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
        200: json('`{accepted_tasks, job_status, latest_run}`', ADDED),
        ...errors,
        409: { description: 'The job is closed (last_batch_received; job_not_open for a scheduled job), another submission is still being written: retry (run_not_terminal), or the Idempotency-Key was used with another body (idempotency_key_conflict)' },
      },
      async handler(ctx, input) {
        const body = input.body as { tasks: TaskInput[]; last_batch?: boolean | null };
        const key = idempotencyKeyOf(ctx);
        const added = await commands.addTasks(principalOf(ctx), input.params.job_id ?? '', body.tasks, body.last_batch === true, key === undefined ? undefined : { key, body: input.body });
        ctx.body = { accepted_tasks: added.accepted, job_status: added.job.status, latest_run: added.run ? presentRun(added.run, added.job) : null };
      },
    },
    {
      ...common,
      method: 'POST',
      path: '/v1/jobs/{job_id}/close',
      operationId: 'closeJob',
      summary: 'Close an open job: its run finishes the tasks it has and ends.',
      responses: { 200: json('The job', JOB), ...errors, 409: { description: 'A submission is still being written (run_not_terminal)' } },
      async handler(ctx, input) {
        ctx.body = await present(await commands.close(principalOf(ctx), input.params.job_id ?? ''));
      },
    },
    {
      ...common,
      method: 'PUT',
      path: '/v1/jobs/{job_id}/schedule',
      operationId: 'putJobSchedule',
      summary: 'Replace a scheduled job’s schedule; a run in flight goes on, the new schedule governs the next fires.',
      body: PUT_SCHEDULE,
      responses: { 200: json('The job', JOB), ...errors, 409: { description: 'Not a scheduled job (conflict)' } },
      async handler(ctx, input) {
        ctx.body = await present(await commands.setSchedule(principalOf(ctx), input.params.job_id ?? '', input.body as JobSchedule));
      },
    },
    {
      ...common,
      method: 'POST',
      path: '/v1/jobs/{job_id}/schedule/state',
      operationId: 'setJobScheduleState',
      summary: 'Pause a scheduled job’s fires (`paused`; a run in flight goes on) or resume them (`active`).',
      body: SCHEDULE_STATE_BODY,
      responses: { 200: json('The job', JOB), ...errors, 409: { description: 'Not a scheduled job (conflict)' } },
      async handler(ctx, input) {
        const state = (input.body as { schedule_state: ScheduleState }).schedule_state;
        ctx.body = await present(await commands.setScheduleState(principalOf(ctx), input.params.job_id ?? '', state));
      },
    },
  ];
}
