/**
 * The Batch surface under `/v1/jobs` (key in `X-API-Key` only), in the shapes the official clients
 * send and parse. Handlers validate, call one command or query (core/batch/commands.ts), and
 * present what it answers (present.ts, present-results.ts). Result bodies, export files and input
 * uploads are reached through capability links (core/batch/links.ts) the clients fetch without
 * credentials.
 *
 *   job-routes.ts      jobs, tasks, close, schedules
 *   run-routes.ts      run controls, reruns, runs, exports
 *   result-routes.ts   results, task bodies, task histories
 *   webhook-routes.ts  a job's webhook and its deliveries
 *   input-routes.ts    CSV inputs and the capability links
 */
import type { ApiDeps } from '../deps';
import type { Route } from '../http/routes';
import { createBatchContext } from './context';
import { inputRoutes } from './input-routes';
import { jobRoutes } from './job-routes';
import { resultRoutes } from './result-routes';
import { runRoutes } from './run-routes';
import { webhookRoutes } from './webhook-routes';

export function batchRoutes(deps: ApiDeps): Route[] {
  const c = createBatchContext(deps);
  return [...jobRoutes(c), ...runRoutes(c), ...resultRoutes(c), ...webhookRoutes(c), ...inputRoutes(c)];
}

