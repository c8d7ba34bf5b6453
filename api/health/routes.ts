/**
 * Liveness (`/healthz`) and readiness (`/readyz`) for load balancers and orchestrators, open to all.
 * `/readyz?deep=true` runs a workflow through a worker and names the worker: like `/metrics`, it is for
 * operators only, behind `OPERATOR_TOKEN`.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import type { Config } from '../../base/config';
import { problem } from '../../base/errors';
import { Readiness } from '../../core/readiness';
import { runSelfCheck } from '../../core/selfcheck';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '../../base/unavailable';
import type { HttpContext, HttpMiddleware } from '../http/context';
import type { ApiDeps } from '../deps';
import type { Route } from '../http/routes';

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

/** Whether the request carries `Authorization: Bearer <OPERATOR_TOKEN>`; never true while none is set. */
function isOperator(ctx: HttpContext, config: Pick<Config, 'operatorToken'>): boolean {
  const token = config.operatorToken;
  const given = /^Bearer\s+(\S+)$/i.exec(ctx.get('Authorization'))?.[1];
  // Compared as digests: equal lengths, constant time.
  return token !== undefined && token !== '' && given !== undefined && timingSafeEqual(digest(given), digest(token));
}

function checkOperator(ctx: HttpContext, config: Pick<Config, 'operatorToken'>): void {
  if (isOperator(ctx, config)) return;
  throw problem(
    'unauthenticated',
    config.operatorToken ? 'This endpoint is for operators: send Authorization: Bearer <OPERATOR_TOKEN>.' : 'This endpoint is closed: the operator has set no OPERATOR_TOKEN.',
    { headers: { 'WWW-Authenticate': 'Bearer realm="operator"' } },
  );
}

/** Opens a route to operators only. */
export const requireOperator =
  (config: Pick<Config, 'operatorToken'>): HttpMiddleware =>
  async (ctx, next) => {
    checkOperator(ctx, config);
    await next();
  };

const SELF_CHECK_TIMEOUT_MS = 15_000;

export function healthRoutes(deps: ApiDeps): Route[] {
  return [
    {
      method: 'GET',
      path: '/healthz',
      operationId: 'health',
      summary: 'The API process is alive.',
      tags: ['Operations'],
      internal: true,
      responses: { 200: { description: 'Alive' } },
      handler(ctx) {
        ctx.body = { status: 'ok' };
      },
    },
    {
      method: 'GET',
      path: '/readyz',
      operationId: 'ready',
      summary: 'The database and Temporal are reachable and a live worker polls the task queue; with deep=true (operators only), a worker ran a workflow too.',
      description: 'Answers within a second (checks run concurrently, each cut at 0.8 s) and reuses its answer for a second. 503 `not_ready` with `Retry-After` names what is missing in `checks`.',
      tags: ['Operations'],
      internal: true,
      query: {
        type: 'object',
        additionalProperties: false,
        properties: { deep: { type: 'boolean', description: 'Also run a workflow through a worker.' } },
      },
      responses: { 200: { description: 'Ready' }, 503: { description: 'A dependency is unreachable, or no worker is alive' } },
      async handler(ctx, { query }) {
        if (query.deep === true) checkOperator(ctx, deps.config);
        const report = await deps.readiness.report();
        const checks: Record<string, string> = Readiness.present(report.checks);
        let selfCheck: { workflowId: string; worker: string } | undefined;
        // Deep: beyond "a worker polls", one actually ran a workflow and wrote to the database. Not
        // bound by the one-second answer: operators ask for it knowingly.
        if (query.deep === true && report.ready) {
          try {
            selfCheck = await runSelfCheck({ client: deps.temporal.client, db: deps.db.db, taskQueue: deps.config.temporalTaskQueue }, SELF_CHECK_TIMEOUT_MS);
          } catch (error) {
            checks.worker = `unreachable: ${(error as Error).message}`.slice(0, 300);
          }
        }
        const failing = Object.entries(checks).filter(([, result]) => result !== 'ok');
        if (failing.length > 0) {
          throw problem('not_ready', `Not ready: ${failing.map(([name]) => name).join(', ')}.`, {
            members: { checks },
            headers: { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
          });
        }
        ctx.body = {
          status: 'ready',
          checks,
          ...(selfCheck ? { self_check: { workflow_id: selfCheck.workflowId, worker: selfCheck.worker } } : {}),
        };
      },
    },
  ];
}
