/** Batch results of a job's latest run or of one run: pages of results, a task's body and its history. */
import { decodeCursor, findTask, presentHistory, readResults, type ResultFilter } from '../../core/batch/read';
import { taskPlace } from '../../core/batch/store';
import { problem } from '../../core/errors';
import { principalOf } from '../auth/authenticate';
import type { Route } from '../http/routes';
import type { BatchContext } from './context';
import { errors, json, RESULTS_QUERY } from './schemas';

export function resultRoutes(c: BatchContext): Route[] {
  const { deps, commands, common, presenterOf, perCredit, runOf, sendTaskBody } = c;
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

  return [...taskRoutes('/v1/jobs/{job_id}', false), ...taskRoutes('/v1/jobs/{job_id}/runs/{run_id}', true)];
}
