/**
 * Liveness (`/healthz`) and readiness (`/readyz`) for load balancers and orchestrators, open to all.
 * `/readyz?deep=true` runs a workflow through a worker and names the worker: like `/metrics`, it is for
 * operators only, behind `OPERATOR_TOKEN`.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import type { Config } from '../../core/config';
import { problem } from '../../core/errors';
import { runSelfCheck } from '../../core/selfcheck';
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

type CheckResult = 'ok' | string;

async function check(run: () => Promise<unknown>): Promise<CheckResult> {
  try {
    await run();
    return 'ok';
  } catch (error) {
    return `unreachable: ${(error as Error).message}`.slice(0, 300);
  }
}

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
      summary: 'The database and Temporal are reachable; with deep=true (operators only), a worker ran a workflow too.',
      tags: ['Operations'],
      internal: true,
      query: {
        type: 'object',
        additionalProperties: false,
        properties: { deep: { type: 'boolean', description: 'Also run a workflow through a worker.' } },
      },
      responses: { 200: { description: 'Ready' }, 503: { description: 'A dependency is unreachable' } },
      async handler(ctx, { query }) {
        if (query.deep === true) checkOperator(ctx, deps.config);
        const [database, temporal] = await Promise.all([
          check(() => deps.db.ping()),
          check(() => deps.temporal.ping()),
        ]);
        const checks: Record<string, CheckResult> = { database, temporal };
        let selfCheck: { workflowId: string; worker: string } | undefined;
        if (query.deep === true && database === 'ok' && temporal === 'ok') {
          checks.worker = await check(async () => {
            selfCheck = await runSelfCheck(
              { client: deps.temporal.client, db: deps.db.db, taskQueue: deps.config.temporalTaskQueue },
              SELF_CHECK_TIMEOUT_MS,
            );
          });
        }
        const failing = Object.entries(checks).filter(([, result]) => result !== 'ok');
        if (failing.length > 0) {
          throw problem('not_ready', `Not ready: ${failing.map(([name]) => name).join(', ')}.`, {
            members: { checks },
            headers: { 'Retry-After': '5' },
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
