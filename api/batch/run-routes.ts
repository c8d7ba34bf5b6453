/** Batch runs: stop, pause, resume, rerun, list, read, delete, and exports of a run. */
import type { TaskStatus } from '../../core/batch/commands';
import { principalOf } from '../auth/authenticate';
import type { Route } from '../http/routes';
import type { BatchContext } from './context';
import { presentRun } from './present';
import { EXPORT, EXPORT_STARTED, RERUN, RUN, RUNS_PAGE } from './response-schemas';
import { errors, EXPORT_QUERY, json, RERUN_QUERY, RUNS_QUERY } from './schemas';

export function runRoutes(c: BatchContext): Route[] {
  const { deps, commands, common, linksOf, ttlMs, originOf, idempotencyKeyOf } = c;
  const runAction = (action: 'stop' | 'pause' | 'resume', summary: string): Route => ({
    ...common,
    method: 'POST',
    path: `/v1/jobs/{job_id}/${action}`,
    operationId: `${action}Run`,
    summary,
    responses: { 200: json('The run', RUN), ...errors, 409: { description: 'The run has ended or is stopping (run_not_stoppable), or the job has no run (no_prior_run)' } },
    async handler(ctx, input) {
      const principal = principalOf(ctx);
      const view = await commands[action](principal, input.params.job_id ?? '');
      ctx.body = presentRun(view, (await commands.query.job(principal, input.params.job_id ?? '')).job);
    },
  });

  return [
    runAction('stop', 'Stop the current run: it is `stopped` at once and starts no task after; tasks in flight may finish (billed only if they succeed), the others stay pending.'),
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
      responses: { 202: json('The new run, accepted: `{job_id, status, latest_run, rerun_of, retried_tasks, inherited_tasks}`', RERUN), ...errors, 402: { description: 'payment_required' }, 409: { description: 'The latest run has not ended (run_not_terminal), no task matches (no_matching_tasks), the job is open (job_not_open) or has no run (no_prior_run), the partial rerun window has passed (partial_rerun_window_expired), or the Idempotency-Key was used with another request (idempotency_key_conflict)' }, 429: { description: 'quota_exceeded' } },
      async handler(ctx, input) {
        const principal = principalOf(ctx);
        const statuses = (input.query.status as string | undefined)?.split(',') as TaskStatus[] | undefined;
        // Work accepted while no worker runs would not move (readiness.ts): refused with 503 instead.
        const rerun = await commands.rerun(principal, input.params.job_id ?? '', statuses, idempotencyKeyOf(ctx), () => deps.readiness.requireWorker());
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
      responses: { 200: json('`{runs, next_cursor}`', RUNS_PAGE), ...errors },
      async handler(ctx, input) {
        const page = await commands.query.listRuns(principalOf(ctx), input.params.job_id ?? '', {
          limit: (input.query.limit as number | undefined) ?? 20,
          cursor: input.query.cursor as string | undefined,
        });
        ctx.body = { runs: page.runs.map((view) => presentRun(view, page.job)), next_cursor: page.nextCursor };
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/v1/jobs/{job_id}/runs/{run_id}',
      operationId: 'getRun',
      summary: 'One run with its stats.',
      responses: { 200: json('The run', RUN), ...errors },
      async handler(ctx, input) {
        const { job, view } = await commands.query.run(principalOf(ctx), input.params.job_id ?? '', input.params.run_id);
        ctx.body = presentRun(view, job);
      },
    },
    {
      ...common,
      method: 'DELETE',
      path: '/v1/jobs/{job_id}/runs/{run_id}',
      operationId: 'deleteRun',
      summary: 'Delete a run: it stops if running, and its results are no longer served.',
      responses: { 204: { description: 'Deleted' }, ...errors, 409: { description: 'A rerun reads this run’s results (run_has_descendants)' } },
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
      responses: { 202: json('`{export_id, status, created_at, expires_at}`', EXPORT_STARTED), ...errors },
      async handler(ctx, input) {
        const format = (input.query.format as 'ndjson' | 'csv' | undefined) ?? 'ndjson';
        const doc = await commands.exports.start(principalOf(ctx), input.params.job_id ?? '', input.params.run_id ?? '', format);
        ctx.status = 202;
        ctx.body = { export_id: doc._id, status: doc.status, created_at: doc.created_at.toISOString(), expires_at: doc.expires_at.toISOString() };
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/v1/jobs/{job_id}/runs/{run_id}/exports/{export_id}',
      operationId: 'getExport',
      summary: 'An export’s state; `download_url` once completed.',
      responses: { 200: json('`{export_id, status, error, download_url, created_at, expires_at}`', EXPORT), ...errors },
      async handler(ctx, input) {
        const doc = await commands.exports.get(principalOf(ctx), input.params.job_id ?? '', input.params.run_id ?? '', input.params.export_id ?? '');
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
