import { problem } from '../../core/errors';
import { runSelfCheck } from '../../core/selfcheck';
import type { ApiDeps } from '../deps';
import type { Route } from '../http/routes';

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
      summary: 'The database and Temporal are reachable; with deep=true, a worker ran a workflow too.',
      tags: ['Operations'],
      internal: true,
      query: {
        type: 'object',
        additionalProperties: false,
        properties: { deep: { type: 'boolean', description: 'Also run a workflow through a worker.' } },
      },
      responses: { 200: { description: 'Ready' }, 503: { description: 'A dependency is unreachable' } },
      async handler(ctx, { query }) {
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
