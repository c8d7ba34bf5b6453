/** Batch results of a job's latest run or of one run: pages of results, a task's body and its history. */
import type { ResultFilter } from '../../core/batch/commands';
import { principalOf } from '../auth/authenticate';
import type { Route } from '../http/routes';
import type { BatchContext } from './context';
import { sendBody } from './present';
import { presentHistory, presentResult } from './present-results';
import { HISTORY, RESULTS_PAGE } from './response-schemas';
import { errors, json, RESULTS_QUERY } from './schemas';

export function resultRoutes(c: BatchContext): Route[] {
  const { deps, commands, common, presenterOf } = c;
  const taskRoutes = (prefix: string, withRun: boolean): Route[] => [
    {
      ...common,
      method: 'GET',
      path: `${prefix}/results`,
      operationId: withRun ? 'listRunResults' : 'listJobResults',
      summary: withRun ? 'Results of one run, a page at a time.' : 'Results of the latest run, a page at a time.',
      description: 'Each task once, in submission order. `result_url` reads a body without credentials until it expires.',
      query: RESULTS_QUERY,
      responses: { 200: json('A page of results: `{results, next_cursor}`', RESULTS_PAGE), ...errors },
      async handler(ctx, input) {
        const page = await commands.query.results(principalOf(ctx), input.params.job_id ?? '', input.params.run_id, {
          status: ((input.query.status as string | undefined) ?? 'all') as ResultFilter,
          cursor: input.query.cursor as string | undefined,
        });
        const presenter = presenterOf(ctx);
        const of = { jobId: page.job._id, runId: page.run._id, perCredit: page.perCredit };
        ctx.body = { results: page.entries.map((entry) => presentResult(presenter, of, entry)), next_cursor: page.nextCursor };
      },
    },
    {
      ...common,
      method: 'GET',
      path: `${prefix}/tasks/{task_id}/content`,
      operationId: withRun ? 'getRunTaskContent' : 'getTaskContent',
      summary: 'The stored body of a successful task.',
      responses: { 200: { description: 'The body, with its content type' }, ...errors, 409: { description: 'The task has no body (task_not_ready)' }, 410: { description: 'The result is past the run\'s retention window or no longer stored (result_expired)' } },
      async handler(ctx, input) {
        sendBody(ctx, await commands.query.taskBody(principalOf(ctx), input.params.job_id ?? '', input.params.run_id, input.params.task_id ?? ''));
      },
    },
    {
      ...common,
      method: 'GET',
      path: `${prefix}/tasks/{task_id}/history`,
      operationId: withRun ? 'getRunTaskHistory' : 'getTaskHistory',
      summary: 'Every attempt of a task: its times, outcome and spend.',
      responses: { 200: json('`{events}`', HISTORY), ...errors },
      async handler(ctx, input) {
        const found = await commands.query.taskHistory(principalOf(ctx), input.params.job_id ?? '', input.params.run_id, input.params.task_id ?? '');
        ctx.body = presentHistory(deps.config.docsUrl, found.item, found.perCredit);
      },
    },
  ];

  return [...taskRoutes('/v1/jobs/{job_id}', false), ...taskRoutes('/v1/jobs/{job_id}/runs/{run_id}', true)];
}
