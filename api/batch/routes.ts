/**
 * The Batch surface under `/v1/jobs` (key in `X-API-Key` only), in the shapes the official clients
 * send and parse. Handlers validate, call one command (core/batch/jobs.ts) or read
 * (core/batch/read.ts), and present. Result bodies, export files and input uploads are reached
 * through capability links (core/batch/links.ts) the clients fetch without credentials.
 */
import { WorkflowIdReusePolicy } from '@temporalio/client';
import type { Principal } from '../../core/accounts';
import { createBatchCommands, isTerminal, type NewJob } from '../../core/batch/jobs';
import { createLinks, type Links } from '../../core/batch/links';
import { decodeCursor, findTask, presentHistory, presentJob, presentRun, readBody, readResults, type Presenter, type ResultFilter } from '../../core/batch/read';
import { readExport } from '../../core/batch/exports';
import { isDeleted, type RunView } from '../../core/batch/runs';
import { parseSchedule, SCHEDULE_SCHEMA, type JobSchedule, type ScheduleState } from '../../core/batch/schedules';
import { batchCollections, taskPlace, type ExportDoc, type JobDoc, type RunDoc, type StoredTask, type TaskStatus, type WebhookSetting } from '../../core/batch/store';
import { problem } from '../../core/errors';
import { newUlid } from '../../core/ids';
import { createHmacKeys } from '../../core/webhooks/hmac-keys';
import { createSecretBox } from '../../core/webhooks/secret-box';
import { createWebhookEvents } from '../../core/webhooks/events';
import { checkWebhookUrl, createTargetGuard } from '../../engine';
import { authenticate, principalOf, securityOf } from '../auth/authenticate';
import type { ApiDeps } from '../deps';
import type { AppContext } from '../http/context';
import type { ObjectSchema, ResponseSpec, Route } from '../http/routes';
import { batchIssues } from '../webhooks/routes';
import { parseCsvTasks } from './inputs';
import { checkJobParams, checkTasks, paramStrings, type TaskInput } from './validate';

const json = (description: string, schema: Record<string, unknown> = { type: 'object' }): ResponseSpec => ({ description, content: { 'application/json': { schema } } });

const PARAM_VALUE = { oneOf: [{ type: 'string' }, { type: 'boolean' }, { type: 'integer' }, { type: 'object' }, { type: 'array' }] };
const PARAMS = { type: 'object', additionalProperties: PARAM_VALUE, description: 'Fetch parameters (as on GET /v1/) applied to every task.' };
const METADATA = { type: 'object', maxProperties: 20, additionalProperties: { type: 'string', maxLength: 1024 }, propertyNames: { maxLength: 64, pattern: '^[A-Za-z0-9._-]+$' } };
const EXTERNAL_ID = { type: 'string', maxLength: 128, pattern: '^[A-Za-z0-9._-]+$' };
const TASK = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    url: { type: 'string', minLength: 1, maxLength: 8192 },
    external_id: EXTERNAL_ID,
    metadata: METADATA,
    method: { type: 'string', enum: ['GET', 'POST'], description: 'GET only for now; POST is refused per task.' },
    body: {},
    zenrows_params: PARAMS,
  },
};
const WEBHOOK = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: { url: { type: 'string', minLength: 1, maxLength: 2048 }, signature: { type: 'boolean' } },
};
const CREATE_BODY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    type: { type: 'string', enum: ['regular', 'scheduled'], description: '`scheduled` starts no run: `schedule` fires them.' },
    status: { type: 'string', enum: ['open', 'closed'] },
    schedule: { ...SCHEDULE_SCHEMA, description: 'For `type: scheduled`: exactly one of `at`, `rate`, `calendar`, and `timezone` with `at` and `calendar`.' },
    zenrows_params: PARAMS,
    tasks: { type: 'array', maxItems: 100_000, items: TASK },
    file_input_id: { type: 'string', minLength: 1, maxLength: 64 },
    external_id: EXTERNAL_ID,
    name: { type: 'string', maxLength: 100 },
    metadata: METADATA,
    webhook: WEBHOOK,
  },
};
const ADD_BODY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['tasks'],
  properties: { tasks: { type: 'array', minItems: 1, maxItems: 10_000, items: TASK }, last_batch: { type: ['boolean', 'null'] } },
};
const PUT_WEBHOOK: ObjectSchema = { ...WEBHOOK, required: ['url', 'signature'] } as ObjectSchema;
const PUT_SCHEDULE: ObjectSchema = SCHEDULE_SCHEMA as unknown as ObjectSchema;
const SCHEDULE_STATE_BODY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['schedule_state'],
  properties: { schedule_state: { type: 'string', enum: ['active', 'paused'] } },
};
const LIST_QUERY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 100 },
    cursor: { type: 'string', minLength: 1, maxLength: 200 },
    type: { type: 'string', enum: ['regular', 'scheduled'] },
    status: { type: 'string', enum: ['open', 'closed', 'deleted'] },
  },
};
const RUNS_QUERY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { limit: { type: 'integer', minimum: 1, maximum: 100 }, cursor: { type: 'string', minLength: 1, maxLength: 200 } },
};
const RESULTS_QUERY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    status: { type: 'string', enum: ['all', 'successful', 'failed', 'processing', 'pending'] },
    cursor: { type: 'string', minLength: 1, maxLength: 200 },
  },
};
const RERUN_QUERY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { status: { type: 'string', pattern: '^(successful|failed|pending|processing)(,(successful|failed|pending|processing))*$', description: 'Rerun only tasks with these statuses (comma-separated).' } },
};
const EXPORT_QUERY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { format: { type: 'string', enum: ['ndjson', 'csv'], description: 'File format (default ndjson).' } },
};
const INPUT_BODY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['type'],
  properties: {
    type: { type: 'string', enum: ['csv'] },
    csv: {
      type: 'object',
      additionalProperties: false,
      required: ['fields'],
      properties: {
        delimiter: { type: 'string', minLength: 1, maxLength: 1 },
        quote: { type: 'string', minLength: 1, maxLength: 1 },
        header: { type: 'boolean' },
        fields: {
          type: 'object',
          additionalProperties: false,
          required: ['url'],
          properties: {
            url: { oneOf: [{ type: 'string', minLength: 1 }, { type: 'integer', minimum: 0 }] },
            external_id: { oneOf: [{ type: 'string', minLength: 1 }, { type: 'integer', minimum: 0 }] },
          },
        },
      },
    },
  },
};

const errors = {
  400: { description: 'invalid_argument' },
  401: { description: 'API key missing, invalid or in the query string (unauthenticated)' },
  404: { description: 'No such job, run, task or export on the account (not_found)' },
  503: { description: 'Temporary failure (internal)' },
};

const SANDBOX = { 'Content-Security-Policy': 'sandbox', 'X-Content-Type-Options': 'nosniff' };

export function batchRoutes(deps: ApiDeps): Route[] {
  const commands = createBatchCommands({ db: deps.db.db, accounts: deps.accounts, temporal: deps.temporal, config: deps.config });
  const collections = batchCollections(deps.db.db);
  const guard = createTargetGuard(deps.config);
  const events = createWebhookEvents(deps.db.db);
  let links: Links | undefined;
  const linksOf = (): Links => {
    if (!deps.config.secretsKey) throw problem('internal', 'Result links are unavailable: the server has no SECRETS_KEY configured.');
    return (links ??= createLinks(deps.config.secretsKey));
  };
  const ttlMs = deps.config.batchLinkTtlMinutes * 60_000;
  const common = { tags: ['Batch'], security: securityOf('batch'), before: [authenticate(deps, 'batch')], issues: batchIssues };

  /** Links point at the host the caller reached (behind a proxy, with PROXY set, the forwarded one). */
  const originOf = (ctx: AppContext): string => `${ctx.protocol}://${ctx.host}`;
  const presenterOf = (ctx: AppContext): Presenter => ({
    docsUrl: deps.config.docsUrl,
    resultUrl: (jobId, runId, taskId) => `${originOf(ctx)}/v1/batch/links/results/${linksOf().sign('result', `${jobId}:${runId}:${taskId}`, Date.now() + ttlMs)}`,
  });
  const scheduleRules = () => ({ minIntervalSeconds: deps.config.batchScheduleMinIntervalSeconds, now: Date.now() });
  const perCredit = (principal: Principal): number => (principal.plan.credits > 0 ? principal.plan.price / principal.plan.credits : 0);

  const checkWebhook = async (principal: Principal, webhook: { url: string; signature?: boolean } | undefined): Promise<WebhookSetting | undefined> => {
    if (!webhook) return undefined;
    const target = await checkWebhookUrl(guard, webhook.url);
    if (!target.ok) throw problem(target.code, target.detail);
    const signature = webhook.signature === true;
    if (signature) {
      if (!deps.config.secretsKey) throw problem('internal', 'Signing keys are unavailable: the server has no SECRETS_KEY configured.');
      const key = await createHmacKeys(deps.db.db, createSecretBox(deps.config.secretsKey)).signingKey(principal.accountId);
      if (!key) throw problem('webhook_signing_requires_active_key', 'Signed webhooks need an active HMAC key: call POST /v1/hmac/keys/rotate first.');
    }
    return { url: target.url.href, signature };
  };

  const viewOf = async (job: JobDoc, runId: string | undefined): Promise<RunView> => {
    const view = runId ? await commands.runs.one({ _id: runId, job_id: job._id }) : await commands.latestRun(job);
    if (!view || isDeleted(view)) throw problem('not_found', runId ? `No run ${runId} in job ${job._id}.` : `Job ${job._id} has no run yet.`);
    return view;
  };
  const runOf = async (job: JobDoc, runId: string | undefined): Promise<RunDoc> => (await viewOf(job, runId)).run;

  const jobView = async (job: JobDoc) => presentJob(job, await commands.latestRun(job));

  const page = <T extends { _id: string }>(docs: T[], limit: number, cursorOf: (doc: T) => string) => ({
    items: docs.slice(0, limit),
    next_cursor: docs.length > limit ? cursorOf(docs[limit - 1] as T) : null,
  });

  const taskRoutes = (prefix: string, withRun: boolean): Route[] => [
    {
      ...common,
      method: 'GET',
      path: `${prefix}/results`,
      operationId: withRun ? 'listRunResults' : 'listJobResults',
      summary: withRun ? 'Results of one run, a page at a time.' : 'Results of the latest run, a page at a time.',
      description: 'Each task once, in submission order. `result_url` reads a body without credentials until it expires.',
      query: RESULTS_QUERY,
      responses: { 200: json('A page of results: `{results, next_cursor}`'), ...errors },
      async handler(ctx, input) {
        const principal = principalOf(ctx);
        const job = await commands.ownJob(principal, input.params.job_id ?? '');
        const run = await runOf(job, input.params.run_id);
        const cursor = input.query.cursor as string | undefined;
        const from = cursor === undefined ? 0 : decodeCursor(cursor);
        if (from === undefined) throw problem('invalid_argument', 'The cursor is not one this endpoint gave.', { members: { parameter: 'cursor' } });
        ctx.body = await readResults(deps.db.db, presenterOf(ctx), job, run, ((input.query.status as string | undefined) ?? 'all') as ResultFilter, from, perCredit(principal));
      },
    },
    {
      ...common,
      method: 'GET',
      path: `${prefix}/tasks/{task_id}/content`,
      operationId: withRun ? 'getRunTaskContent' : 'getTaskContent',
      summary: 'The stored body of a successful task.',
      responses: { 200: { description: 'The body, with its content type' }, ...errors, 409: { description: 'The task has no body (conflict)' } },
      async handler(ctx, input) {
        const job = await commands.ownJob(principalOf(ctx), input.params.job_id ?? '');
        const run = await runOf(job, input.params.run_id);
        await sendTaskBody(ctx, job, run, input.params.task_id ?? '');
      },
    },
    {
      ...common,
      method: 'GET',
      path: `${prefix}/tasks/{task_id}/history`,
      operationId: withRun ? 'getRunTaskHistory' : 'getTaskHistory',
      summary: 'Every attempt of a task: its times, outcome and spend.',
      responses: { 200: json('`{events}`'), ...errors },
      async handler(ctx, input) {
        const principal = principalOf(ctx);
        const job = await commands.ownJob(principal, input.params.job_id ?? '');
        const run = await runOf(job, input.params.run_id);
        const place = taskPlace(input.params.task_id ?? '');
        const found = place ? await findTask(deps.db.db, job, run, place) : undefined;
        if (!found) throw problem('not_found', `No task ${input.params.task_id ?? ''} in job ${job._id}.`);
        ctx.body = presentHistory(deps.config.docsUrl, found.item, perCredit(principal));
      },
    },
  ];

  const sendTaskBody = async (ctx: AppContext, job: JobDoc, run: RunDoc, taskId: string): Promise<void> => {
    const place = taskPlace(taskId);
    const found = place ? await findTask(deps.db.db, job, run, place) : undefined;
    if (!found) throw problem('not_found', `No task ${taskId} in job ${job._id}.`);
    const { item } = found;
    if (!item || item.s !== 'successful' || item.at === undefined) {
      throw problem('conflict', `Task ${taskId} has no body: it is ${item?.s ?? 'pending'}.`, { members: { reason: 'task_not_ready' } });
    }
    const body = await readBody(deps.db.db, run._id, found.slice, found.seq - found.slice.first, item);
    ctx.set(SANDBOX);
    ctx.set('Content-Type', item.ct ?? 'application/octet-stream');
    ctx.body = body;
  };

  const runAction = (action: 'stop' | 'pause' | 'resume', summary: string): Route => ({
    ...common,
    method: 'POST',
    path: `/v1/jobs/{job_id}/${action}`,
    operationId: `${action}Run`,
    summary,
    responses: { 200: json('The run'), ...errors, 409: { description: 'The run has ended (conflict)' } },
    async handler(ctx, input) {
      const principal = principalOf(ctx);
      const view = await commands[action](principal, input.params.job_id ?? '');
      ctx.body = presentRun(view, await commands.ownJob(principal, input.params.job_id ?? ''));
    },
  });

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
        const schedule = scheduled && body.schedule ? parseSchedule(body.schedule, scheduleRules()) : undefined;
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
    runAction('stop', 'Stop the current run: tasks in flight finish, the others stay pending.'),
    runAction('pause', 'Pause the current run after the tasks in flight.'),
    runAction('resume', 'Resume a paused run.'),
    {
      ...common,
      method: 'POST',
      path: '/v1/jobs/{job_id}/rerun',
      operationId: 'rerunJob',
      summary: 'Run a closed job again: every task, or only those whose last status is in `status`.',
      description: 'Header `Idempotency-Key`: the same key returns the same run.',
      query: RERUN_QUERY,
      responses: { 202: json('The new run, accepted: `{job_id, status, latest_run, rerun_of, retried_tasks, inherited_tasks}`'), ...errors, 402: { description: 'payment_required' }, 409: { description: 'The latest run has not ended, or no task matches (conflict)' }, 429: { description: 'quota_exceeded' } },
      async handler(ctx, input) {
        const principal = principalOf(ctx);
        const statuses = (input.query.status as string | undefined)?.split(',') as TaskStatus[] | undefined;
        const key = ctx.headers['idempotency-key'] === undefined ? undefined : ctx.get('Idempotency-Key');
        const rerun = await commands.rerun(principal, input.params.job_id ?? '', statuses, key);
        // Accepted, as the clients expect: the run works in the background.
        ctx.status = 202;
        ctx.body = {
          job_id: rerun.job._id,
          status: rerun.job.status,
          latest_run: presentRun(rerun.run, rerun.job),
          rerun_of: rerun.run.run.rerun_of,
          retried_tasks: rerun.retried,
          inherited_tasks: rerun.inherited,
        };
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/v1/jobs/{job_id}/runs',
      operationId: 'listRuns',
      summary: 'A job’s runs, newest first.',
      query: RUNS_QUERY,
      responses: { 200: json('`{runs, next_cursor}`'), ...errors },
      async handler(ctx, input) {
        const job = await commands.ownJob(principalOf(ctx), input.params.job_id ?? '');
        const limit = (input.query.limit as number | undefined) ?? 20;
        const cursor = input.query.cursor as string | undefined;
        let before = Number.MAX_SAFE_INTEGER;
        if (cursor !== undefined) {
          const text = Buffer.from(cursor, 'base64url').toString();
          if (!/^r[1-9]\d{0,8}$/.test(text)) throw problem('invalid_argument', 'The cursor is not one this endpoint gave.', { members: { parameter: 'cursor' } });
          before = Number(text.slice(1));
        }
        const views = await commands.runs.ofJob(job._id, before, limit + 1);
        const items = views.slice(0, limit);
        const last = items[items.length - 1];
        const next_cursor = views.length > limit && last ? Buffer.from(`r${last.run.run_sequence}`).toString('base64url') : null;
        ctx.body = { runs: items.map((view) => presentRun(view, job)), next_cursor };
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/v1/jobs/{job_id}/runs/{run_id}',
      operationId: 'getRun',
      summary: 'One run with its stats.',
      responses: { 200: json('The run'), ...errors },
      async handler(ctx, input) {
        const job = await commands.ownJob(principalOf(ctx), input.params.job_id ?? '');
        ctx.body = presentRun(await viewOf(job, input.params.run_id), job);
      },
    },
    {
      ...common,
      method: 'DELETE',
      path: '/v1/jobs/{job_id}/runs/{run_id}',
      operationId: 'deleteRun',
      summary: 'Delete a run: it stops if running, and its results are no longer served.',
      responses: { 204: { description: 'Deleted' }, ...errors, 409: { description: 'A rerun reads this run’s results (conflict)' } },
      async handler(ctx, input) {
        await commands.deleteRun(principalOf(ctx), input.params.job_id ?? '', input.params.run_id ?? '');
        ctx.status = 204;
      },
    },
    ...taskRoutes('/v1/jobs/{job_id}', false),
    ...taskRoutes('/v1/jobs/{job_id}/runs/{run_id}', true),
    {
      ...common,
      method: 'POST',
      path: '/v1/jobs/{job_id}/runs/{run_id}/exports',
      operationId: 'startExport',
      summary: 'Start writing one file with every task of a run (NDJSON, or CSV with `format=csv`).',
      query: EXPORT_QUERY,
      responses: { 202: json('`{export_id, status, created_at, expires_at}`'), ...errors },
      async handler(ctx, input) {
        const principal = principalOf(ctx);
        const job = await commands.ownJob(principal, input.params.job_id ?? '');
        const run = await runOf(job, input.params.run_id);
        const now = new Date();
        const doc: ExportDoc = {
          _id: newUlid(now.getTime()),
          job_id: job._id,
          run_id: run._id,
          account_id: principal.accountId,
          format: (input.query.format as 'ndjson' | 'csv' | undefined) ?? 'ndjson',
          status: 'pending',
          error: null,
          size: 0,
          chunks: 0,
          created_at: now,
          expires_at: new Date(now.getTime() + 7 * 24 * 3_600_000),
        };
        await collections.exports.insertOne(doc);
        await deps.temporal.client.workflow.start('batchExportWorkflow', {
          taskQueue: deps.config.temporalTaskQueue,
          workflowId: `export-${doc._id}`,
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          args: [doc._id],
        });
        ctx.status = 202;
        ctx.body = { export_id: doc._id, status: doc.status, created_at: now.toISOString(), expires_at: doc.expires_at.toISOString() };
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/v1/jobs/{job_id}/runs/{run_id}/exports/{export_id}',
      operationId: 'getExport',
      summary: 'An export’s state; `download_url` once completed.',
      responses: { 200: json('`{export_id, status, error, download_url, created_at, expires_at}`'), ...errors },
      async handler(ctx, input) {
        const principal = principalOf(ctx);
        const job = await commands.ownJob(principal, input.params.job_id ?? '');
        const doc = await collections.exports.findOne({ _id: input.params.export_id ?? '', job_id: job._id, run_id: input.params.run_id ?? '' });
        if (!doc) throw problem('not_found', `No export ${input.params.export_id ?? ''} of this run.`);
        const expires = Math.min(Date.now() + ttlMs, doc.expires_at.getTime());
        ctx.body = {
          export_id: doc._id,
          status: doc.status,
          error: doc.error,
          download_url: doc.status === 'completed' ? `${originOf(ctx)}/v1/batch/links/exports/${linksOf().sign('export', doc._id, expires)}` : null,
          created_at: doc.created_at.toISOString(),
          expires_at: doc.expires_at.toISOString(),
        };
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/v1/jobs/{job_id}/webhook',
      operationId: 'getJobWebhook',
      summary: 'The job’s webhook.',
      responses: { 200: json('`{url, signature}`'), ...errors },
      async handler(ctx, input) {
        const job = await commands.ownJob(principalOf(ctx), input.params.job_id ?? '');
        if (!job.webhook) throw problem('not_found', `Job ${job._id} has no webhook.`);
        ctx.body = job.webhook;
      },
    },
    {
      ...common,
      method: 'PUT',
      path: '/v1/jobs/{job_id}/webhook',
      operationId: 'putJobWebhook',
      summary: 'Set or replace the job’s webhook.',
      body: PUT_WEBHOOK,
      responses: { 200: json('`{url, signature}`'), ...errors },
      async handler(ctx, input) {
        const principal = principalOf(ctx);
        await commands.ownJob(principal, input.params.job_id ?? '');
        const webhook = await checkWebhook(principal, input.body as { url: string; signature: boolean });
        ctx.body = (await commands.setWebhook(principal, input.params.job_id ?? '', webhook ?? null)).webhook;
      },
    },
    {
      ...common,
      method: 'DELETE',
      path: '/v1/jobs/{job_id}/webhook',
      operationId: 'deleteJobWebhook',
      summary: 'Remove the job’s webhook.',
      responses: { 204: { description: 'Removed (also when none was set)' }, ...errors },
      async handler(ctx, input) {
        await commands.setWebhook(principalOf(ctx), input.params.job_id ?? '', null);
        ctx.status = 204;
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
        const schedule = parseSchedule(input.body as JobSchedule, scheduleRules());
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
    {
      ...common,
      method: 'GET',
      path: '/v1/jobs/{job_id}/webhook/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: 'The webhook events of the job’s recent runs, each with every delivery attempt.',
      responses: { 200: json('`{deliveries}`'), ...errors },
      async handler(ctx, input) {
        const job = await commands.ownJob(principalOf(ctx), input.params.job_id ?? '');
        const runs = await collections.runs.find({ job_id: job._id }).sort({ run_sequence: -1 }).limit(20).toArray();
        const found = await events.forRuns(job._id, runs.map((run) => run.run_sequence));
        ctx.body = {
          deliveries: found.map((event) => ({
            event_id: event.event_id,
            run_id: event.run_id,
            event_type: (JSON.parse(event.body) as { event_type: string }).event_type,
            state: event.state,
            url: event.url,
            attempts: event.attempt_records.map((attempt) => ({
              attempt: attempt.attempt,
              at: attempt.at.toISOString(),
              elapsed_ms: attempt.elapsed_ms,
              ...(attempt.status_code !== undefined ? { status_code: attempt.status_code } : {}),
              ...(attempt.error !== undefined ? { error: attempt.error } : {}),
            })),
          })),
        };
      },
    },
    {
      ...common,
      method: 'POST',
      path: '/v1/job_inputs',
      operationId: 'createJobInput',
      summary: 'Allocate a CSV upload for a job’s tasks; PUT the file to `upload.url`, then create the job with `file_input_id`.',
      body: INPUT_BODY,
      responses: { 201: json('`{file_input_id, upload, expires_at}`'), ...errors },
      async handler(ctx, input) {
        const principal = principalOf(ctx);
        const body = input.body as { csv?: { delimiter?: string; quote?: string; header?: boolean; fields: { url: string | number; external_id?: string | number } } };
        if (!body.csv) throw problem('invalid_argument', '"csv" is required for a CSV input.', { members: { parameter: 'csv' } });
        const now = new Date();
        const expires = new Date(now.getTime() + 24 * 3_600_000);
        const id = `in_${newUlid(now.getTime()).toLowerCase()}`;
        await collections.inputs.insertOne({
          _id: id,
          account_id: principal.accountId,
          csv: { delimiter: body.csv.delimiter ?? ',', quote: body.csv.quote ?? '"', header: body.csv.header ?? false, fields: body.csv.fields },
          uploaded: false,
          chunks: 0,
          created_at: now,
          expires_at: expires,
        });
        const linkExpires = Math.min(expires.getTime(), now.getTime() + ttlMs);
        ctx.status = 201;
        ctx.body = {
          file_input_id: id,
          upload: { method: 'PUT', url: `${originOf(ctx)}/v1/batch/links/inputs/${linksOf().sign('input', id, linkExpires)}`, headers: { 'Content-Type': 'text/csv' }, expires_at: new Date(linkExpires).toISOString() },
          expires_at: expires.toISOString(),
        };
      },
    },
    ...linkRoutes(deps, linksOf, commands, sendTaskBody),
  ];

  function linkRoutes(
    _deps: ApiDeps,
    linksFor: () => Links,
    batch: ReturnType<typeof createBatchCommands>,
    send: (ctx: AppContext, job: JobDoc, run: RunDoc, taskId: string) => Promise<void>,
  ): Route[] {
    const linkCommon = { tags: ['Batch links'], issues: batchIssues };
    const gone = (): never => {
      throw problem('not_found', 'This link is unknown or has expired.');
    };
    return [
      {
        ...linkCommon,
        method: 'GET',
        path: '/v1/batch/links/results/{token}',
        operationId: 'readResultLink',
        summary: 'A task’s body through its capability link (no credentials).',
        responses: { 200: { description: 'The body' }, 404: { description: 'Unknown or expired link (not_found)' } },
        async handler(ctx, input) {
          const claim = linksFor().verify(input.params.token ?? '', 'result');
          if (!claim) return gone();
          const [jobId, runId, taskId] = claim.id.split(':');
          const job = await collections.jobs.findOne({ _id: jobId ?? '' });
          const view = await batch.runs.one({ _id: runId ?? '', job_id: jobId ?? '' });
          if (!job || !view || job.status === 'deleted' || isDeleted(view)) return gone();
          ctx.set('Cache-Control', 'private, no-store');
          await send(ctx, job, view.run, taskId ?? '');
        },
      },
      {
        ...linkCommon,
        method: 'GET',
        path: '/v1/batch/links/exports/{token}',
        operationId: 'readExportLink',
        summary: 'An export’s file through its capability link (no credentials).',
        responses: { 200: { description: 'The file (NDJSON or CSV)' }, 404: { description: 'Unknown or expired link (not_found)' } },
        async handler(ctx, input) {
          const claim = linksFor().verify(input.params.token ?? '', 'export');
          if (!claim) return gone();
          const doc = await collections.exports.findOne({ _id: claim.id });
          if (!doc || doc.status !== 'completed') return gone();
          const chunks = await readExport(deps.db.db, doc);
          ctx.set(SANDBOX);
          ctx.set('Cache-Control', 'private, no-store');
          ctx.set('Content-Type', doc.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson');
          ctx.set('Content-Disposition', `attachment; filename="${doc.run_id}.${doc.format}"`);
          ctx.body = Buffer.concat(chunks);
        },
      },
      {
        ...linkCommon,
        method: 'PUT',
        path: '/v1/batch/links/inputs/{token}',
        operationId: 'uploadInputLink',
        summary: 'Upload a CSV input through its capability link (no credentials).',
        body: 'raw',
        responses: { 200: { description: 'Stored' }, 404: { description: 'Unknown or expired link (not_found)' }, 409: { description: 'Already uploaded (conflict)' } },
        async handler(ctx, input) {
          const claim = linksFor().verify(input.params.token ?? '', 'input');
          if (!claim) return gone();
          const doc = await collections.inputs.findOne({ _id: claim.id });
          if (!doc || doc.expires_at.getTime() < Date.now()) return gone();
          if (doc.uploaded) throw problem('conflict', 'This input was already uploaded.');
          const data = input.rawBody ?? Buffer.alloc(0);
          const chunk = 4 * 1024 * 1024;
          let count = 0;
          for (let offset = 0; offset < data.length || count === 0; offset += chunk, count++) {
            await collections.contents.replaceOne({ _id: `${doc._id}:${count}` }, { run_id: doc._id, data: data.subarray(offset, offset + chunk) }, { upsert: true });
          }
          await collections.inputs.updateOne({ _id: doc._id, uploaded: false }, { $set: { uploaded: true, chunks: count } });
          ctx.status = 200;
          ctx.body = '';
        },
      },
    ];
  }
}

export { isTerminal };
