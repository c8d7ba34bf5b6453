import { batchRoutes } from './batch/routes';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa, { type Middleware } from 'koa';
import { problem } from '../base/errors';
import { Registry } from '../base/metrics';
import { accountRoutes, appRoutes } from './accounts/routes';
import { crawlRoutes } from './crawls/routes';
import { fetchRoutes } from './fetch/routes';
import { historyRoutes } from './history/routes';
import { documentRoutes } from './documents/routes';
import { monitorRoutes } from './monitors/routes';
import type { ApiDeps } from './deps';
import { docsRoutes } from './docs/routes';
import { extractRoutes } from './extract/routes';
import { healthRoutes, requireOperator } from './health/routes';
import type { RequestState } from './http/context';
import { leanDispatcher } from './http/lean';
import { createMcpHttp, type McpHttp } from './mcp/http';
import { mcpRoutes } from './mcp/routes';
import { oauthRoutes } from './oauth/routes';
import { httpMetrics, problemMiddleware } from './http/problem-middleware';
import { buildRouter, routeChain, type LeanRoute, type Route } from './http/routes';
import { webhookRoutes } from './webhooks/routes';

/** Every route of the service; each surface contributes its own list. */
export function allRoutes(deps: ApiDeps): Route[] {
  const routes: Route[] = [];
  routes.push(
    ...healthRoutes(deps),
    ...accountRoutes(deps),
    ...crawlRoutes(deps),
    ...extractRoutes(deps),
    ...fetchRoutes(deps),
    ...historyRoutes(deps),
    ...documentRoutes(deps),
    ...webhookRoutes(deps),
    ...batchRoutes(deps),
    ...monitorRoutes(deps),
    ...mcpRoutes(deps),
    ...oauthRoutes(deps),
    // With APP_PORT the account surfaces move to their own listener (createAccountApp).
    ...(deps.config.appPort === undefined ? appRoutes(deps) : []),
    ...docsRoutes({ routes: () => routes, serverUrl: deps.config.publicUrl, docsUrl: deps.config.docsUrl }),
  );
  return routes;
}

/** Prometheus text at `/metrics`: request counts and latencies by route, process memory. Operators only. */
function metricsRoute(registry: Registry, deps: ApiDeps): Route {
  const paused = registry.gauge('fetchplane_hosts_in_backoff', 'Hosts every job leaves alone for now after 429/503 answers (installation-wide).');
  const pauseLeft = registry.gauge('fetchplane_host_backoff_seconds', 'Seconds left of each paused host’s back-off, by host.');
  const keyLookUps = registry.gauge('fetchplane_api_key_lookups', 'Database look-ups of API keys by this process since it started, by what they found (valid, not_valid).');
  const refusedLookUps = registry.gauge('fetchplane_api_key_lookups_refused', 'Keys no cache knew, refused without a look-up since this process started: their network failed too many (AUTH_FAILURE_BURST).');
  const heldRefusals = registry.gauge('fetchplane_api_key_refusals_held', 'Those refusals held now before they are answered (AUTH_FAILURE_HOLD_MS).');
  const refusalHolds = registry.gauge('fetchplane_api_key_refusal_holds', 'Those refusals since this process started, by whether they were held or answered at once (their network or the process held as many as it may).');
  return {
    method: 'GET',
    path: '/metrics',
    operationId: 'metrics',
    summary: 'Prometheus metrics of this API process.',
    tags: ['Operations'],
    internal: true,
    responses: { 200: { description: 'Prometheus text format' }, 401: { description: 'No or wrong operator token' } },
    before: [requireOperator(deps.config)],
    async handler(ctx) {
      const now = Date.now();
      // Paused hosts are read from the store; while it is away, the other metrics still answer.
      const hosts = await deps.services.pausedHosts(new Date(now)).catch(() => undefined);
      if (hosts) {
        paused.setAll([{ labels: {}, value: hosts.length }]);
        pauseLeft.setAll(hosts.map((host) => ({ labels: { host: host.host }, value: Math.ceil((host.until.getTime() - now) / 1000) })));
      }
      const { lookUps } = deps.accounts.keys;
      keyLookUps.setAll([
        { labels: { result: 'valid' }, value: lookUps.valid },
        { labels: { result: 'not_valid' }, value: lookUps.refused },
      ]);
      refusedLookUps.setAll([{ labels: {}, value: deps.accounts.authFailures.refused }]);
      const hold = deps.accounts.refusalHold;
      heldRefusals.setAll([{ labels: {}, value: hold.holding }]);
      refusalHolds.setAll([
        { labels: { result: 'held' }, value: hold.counts.held },
        { labels: { result: 'at_once' }, value: hold.counts.overflow },
      ]);
      ctx.type = 'text/plain; version=0.0.4';
      ctx.body = registry.render();
    },
  };
}

export function createApp(deps: ApiDeps, routes: Route[] = allRoutes(deps)): Koa<RequestState> {
  return buildApp(deps, routes).app;
}

function buildApp(deps: ApiDeps, routes: Route[]): { app: Koa<RequestState>; problems: ReturnType<typeof problemMiddleware> } {
  const app = new Koa<RequestState>({ proxy: false });
  app.silent = true;
  const registry = new Registry();
  const problems = problemMiddleware({ log: deps.log, docsUrl: deps.config.docsUrl, metrics: httpMetrics(registry) });
  app.use(problems);
  const router = buildRouter([...routes, metricsRoute(registry, deps)], { bodyLimit: deps.config.bodyLimit });
  app.use(router.routes());
  app.use(methodNotAllowed);
  app.use(router.allowedMethods());
  return { app, problems };
}

/** The router's 405 and 501 (with their `Allow` header) as problem documents. */
const methodNotAllowed: Middleware<RequestState> = async (ctx, next) => {
  await next();
  if ((ctx.status === 405 || ctx.status === 501) && ctx.body == null) {
    const allow = ctx.response.get('Allow');
    throw problem('method_not_allowed', `${ctx.method} is not allowed on this path${allow ? `; it takes ${allow}` : ''}.`, { headers: { Allow: allow } });
  }
};

/**
 * The request listener of the API: the lean routes (the Fetch surface, see http/lean.ts) without Koa,
 * the MCP server at /mcp (mcp/http.ts), everything else through the Koa app, both with the same middleware and one metrics registry.
 */
export function createListener(
  deps: ApiDeps,
  routes: Route[] = allRoutes(deps),
  mcp: McpHttp = createMcpHttp(deps),
): (req: IncomingMessage, res: ServerResponse) => void {
  const { app, problems } = buildApp(deps, routes);
  const koa = app.callback();
  const lean = leanDispatcher({
    routes: routes.filter((route): route is LeanRoute => route.lean === true).map((route) => ({ route, chain: routeChain(route, deps.config.bodyLimit) })),
    first: problems,
    log: deps.log,
    docsUrl: deps.config.docsUrl,
  });
  return (req, res) => {
    if (!mcp.handle(req, res) && !lean(req, res)) void koa(req, res);
  };
}

/** The {app_url} listener used when APP_PORT is set: agent signup, agent account, claim page. */
export function createAccountApp(deps: ApiDeps): Koa<RequestState> {
  return createApp(deps, [...healthRoutes(deps), ...appRoutes(deps)]);
}
