/**
 * The first middleware: gives every request an id (`X-Request-Id`), a logger carrying it, one access
 * log line, and turns every error thrown below into an `application/problem+json` document. Errors
 * that are not `ApiError`s become a generic 500 whose body reveals nothing of the fault, except the
 * failures of a component that is down (unavailable.ts), which become 503 `service_unavailable`.
 *
 * The request id is always ours: a caller's `X-Request-Id` is logged beside it as `client_request_id`,
 * so nobody can make their requests read as someone else's in the logs. The access log names the
 * route pattern, never the path or the query: paths carry claim tokens and capability links, queries
 * carry API keys.
 */
import { newRequestId } from '../../base/ids';
import { isApiError, problem, type ApiError } from '../../base/errors';
import type { Logger } from '../../base/log';
import { serviceUnavailable, unavailableDependency } from '../../base/unavailable';
import type { Counter, Histogram, Registry } from '../../base/metrics';
import type { HttpContext, HttpMiddleware } from './context';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

const incomingId = /^[\w.:-]{1,128}$/;

export interface HttpMetrics {
  requests: Counter;
  duration: Histogram;
}

export function httpMetrics(registry: Registry): HttpMetrics {
  return {
    requests: registry.counter('http_requests_total', 'HTTP requests answered, by method, route and status.'),
    duration: registry.histogram('http_request_duration_seconds', 'Time to answer HTTP requests.', [
      0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 180,
    ]),
  };
}

/** Label sets seen at most (method, route, status): past it, the series are named again from scratch. */
const MAX_SERIES = 1_000;

export function problemMiddleware(options: { log: Logger; docsUrl: string; metrics: HttpMetrics }): HttpMiddleware {
  // Per method, route and status, the two series every answer counts in: their ids are built once.
  const series = new Map<string, { count: (by?: number) => void; observe: (value: number) => void }>();
  const seriesOf = (method: string, route: string, status: string) => {
    const id = `${method} ${route} ${status}`;
    let found = series.get(id);
    if (!found) {
      if (series.size >= MAX_SERIES) series.clear();
      found = { count: options.metrics.requests.bound({ method, route, status }), observe: options.metrics.duration.bound({ method, route }) };
      series.set(id, found);
    }
    return found;
  };
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const given = ctx.get('X-Request-Id');
    const requestId = newRequestId();
    ctx.state.requestId = requestId;
    ctx.state.log = options.log.child({ request_id: requestId, ...(incomingId.test(given) ? { client_request_id: given } : {}) });
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw problem('not_found', `No route for ${ctx.method} ${ctx.path}.`);
      }
    } catch (error) {
      renderProblem(ctx, toApiError(ctx, error), options.docsUrl);
    } finally {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      // The route pattern, not the path: ids in paths would make a series per resource.
      const route = routePattern(ctx);
      const counted = seriesOf(ctx.method, route, String(ctx.status));
      counted.count();
      counted.observe(durationMs / 1000);
      if (ctx.state.log.enabled('info')) ctx.state.log.info('request', { method: ctx.method, route, status: ctx.status, duration_ms: durationMs });
    }
  };
}

/** The matched route as the OpenAPI document spells it (`/claim/{account_id}/{token}`), or `unmatched`. */
function routePattern(ctx: HttpContext): string {
  const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
  if (typeof matched !== 'string') return 'unmatched';
  // The router's own patterns: as many as there are routes.
  let pattern = PATTERNS.get(matched);
  if (pattern === undefined) {
    pattern = matched.replace(/:(\w+)/g, '{$1}');
    PATTERNS.set(matched, pattern);
  }
  return pattern;
}

const PATTERNS = new Map<string, string>();

function toApiError(ctx: HttpContext, error: unknown): ApiError {
  if (isApiError(error)) return error;
  // Errors Koa itself raises (for example a client that sent a malformed header) carry `expose`.
  const status = (error as { status?: unknown }).status;
  const expose = (error as { expose?: unknown }).expose === true;
  if (expose && typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 413) return problem('payload_too_large', 'The request body is too large.');
    if (status === 431) return problem('request_header_fields_too_large', 'A request header is too large.');
    if (status === 405) return problem('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}.`);
    return problem('invalid_request', (error as Error).message, { status });
  }
  // A component that is down or too slow (database, Temporal) is the service's state, not a fault of
  // this request: 503 with Retry-After, which every client retries, instead of a 500.
  const dependency = unavailableDependency(error);
  if (dependency) {
    ctx.state.log.warn('dependency unavailable', { component: dependency, error: (error as Error).message });
    return serviceUnavailable(dependency, error);
  }
  ctx.state.log.error('unhandled error', { error });
  return problem('internal_error', `An unexpected error occurred; quote urn:service:request:${ctx.state.requestId} when reporting it.`);
}

/** The RFC 9457 document of an error, as every surface renders it. */
export function problemDocument(error: ApiError, requestId: string, docsUrl: string): string {
  return JSON.stringify({
    type: `${docsUrl}/api-error-codes#${error.code}`,
    title: error.title,
    status: error.status,
    detail: error.detail,
    instance: `urn:service:request:${requestId}`,
    code: error.code,
    ...error.members,
  });
}

/** Paths whose callers (agent clients) read errors as `{error, message}`, not as problem documents. */
export const isAgentPath = (path: string): boolean => path.startsWith('/api/agent/');

/** The `{error, message}` body of the agent surfaces. */
export const agentErrorBody = (error: ApiError): string => JSON.stringify({ error: error.code, message: error.detail });

export function renderProblem(ctx: HttpContext, error: ApiError, docsUrl: string): void {
  ctx.status = error.status;
  for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
  if (isAgentPath(ctx.path)) {
    ctx.body = agentErrorBody(error);
    ctx.set('Content-Type', 'application/json; charset=utf-8');
    return;
  }
  ctx.body = problemDocument(error, ctx.state.requestId, docsUrl);
  // Set after the body: clients compare the media type exactly, without a charset parameter.
  ctx.set('Content-Type', PROBLEM_CONTENT_TYPE);
}
