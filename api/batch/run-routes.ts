/** Batch runs: stop, pause, resume, rerun, list, read, delete, and exports of a run. */
import { WorkflowIdReusePolicy } from '@temporalio/client';
import { presentRun } from '../../core/batch/read';
import type { ExportDoc, TaskStatus } from '../../core/batch/store';
import { problem } from '../../core/errors';
import { newUlid } from '../../core/ids';
import { principalOf } from '../auth/authenticate';
import type { Route } from '../http/routes';
import type { BatchContext } from './context';
import { errors, EXPORT_QUERY, json, RERUN_QUERY, RUNS_QUERY } from './schemas';
import { BATCH_EXPORT_WORKFLOW_TYPE, batchExportWorkflowId } from '../../core/jobs/workflow-names';

export function runRoutes(c: BatchContext): Route[] {
  const { deps, commands, collections, common, linksOf, ttlMs, originOf, viewOf, runOf } = c;
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
        // Work accepted while no worker runs would not move (readiness.ts): refused with 503 instead.
        await deps.readiness.requireWorker();
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
        await deps.temporal.client.workflow.start(BATCH_EXPORT_WORKFLOW_TYPE, {
          taskQueue: deps.config.temporalTaskQueue,
          workflowId: batchExportWorkflowId(doc._id),
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
  ];
}
