/**
 * Routes are declared as data: method, path, the JSON Schemas of their query and body, their
 * responses. The same declaration validates requests (ajv) and feeds the OpenAPI document, so a
 * parameter added to a schema is checked and documented at once.
 */
import Router from '@koa/router';
import type { ValidateFunction } from 'ajv/dist/2020';
import type { Middleware } from 'koa';
import { coerceQuery, compileSchema, defaultIssues, issueFrom, type IssueMapper, type JsonSchema, type ObjectSchema } from '../../base/validation';
import { readJsonBody, readRawBody } from './body';
import { announceDeprecation, type Deprecation } from './deprecation';

export type { Deprecation } from './deprecation';
import type { AppContext, HttpContext, HttpMiddleware, RequestState } from './context';

// Validation itself lives in core (the worker and the MCP tools validate without HTTP); routes re-export it.
export { checkBody, checkQuery, defaultIssues, issueMessage, issuesAs, type IssueMapper, type JsonSchema, type ObjectSchema, type ValidationIssue } from '../../base/validation';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ResponseSpec {
  description: string;
  /** Media type → schema (omit the schema for binary or free-form bodies). */
  content?: Record<string, { schema?: JsonSchema }>;
  headers?: Record<string, { description: string; schema: JsonSchema }>;
}

export interface RouteInput {
  query: Record<string, unknown>;
  body: unknown;
  rawBody: Buffer | undefined;
  params: Record<string, string>;
}

interface RouteBase {
  method: Method;
  /** OpenAPI style: `/v1/crawls/{crawl_id}`. */
  path: string;
  operationId: string;
  summary: string;
  tags: string[];
  description?: string;
  /** Names of security schemes that authenticate the route, any of which works. */
  security?: string[];
  query?: ObjectSchema;
  /**
   * A JSON body validated against the schema, `raw` to receive the bytes as they came, or `stream`
   * for a handler that reads the request itself as it arrives (large uploads).
   */
  body?: ObjectSchema | 'raw' | 'stream';
  responses: Record<number, ResponseSpec>;
  /** How validation failures read on this route's surface. */
  issues?: IssueMapper;
  /** Keeps the route out of the OpenAPI document (operational endpoints). */
  internal?: boolean;
  /** Media types (and schemas) a `raw` body is documented with; any type when absent. */
  rawContent?: Record<string, { schema?: JsonSchema }>;
  /** The error responses when they are not problem documents (OAuth's own, HTML pages). */
  errorResponse?: ResponseSpec;
  /**
   * A route being retired (RFC 9745, RFC 8594): marked deprecated in the OpenAPI document, and every
   * answer carries `Deprecation` (the date it was deprecated), `Sunset` when it has one, and a `Link`
   * to what replaces it (deprecation.ts).
   */
  deprecated?: Deprecation;
}

/** A route served by Koa: its handler may use anything of a Koa context. */
export interface KoaRoute extends RouteBase {
  lean?: false;
  /** Runs before validation, for example authentication. */
  before?: Array<Middleware<RequestState> | HttpMiddleware>;
  handler(ctx: AppContext, input: RouteInput): Promise<void> | void;
}

/**
 * A hot route, served without Koa (lean.ts) when its path has no parameters: everything it runs takes
 * an `HttpContext`. Koa serves it too (HEAD, and the same path spelled otherwise), with the same code.
 */
export interface LeanRoute extends RouteBase {
  lean: true;
  before?: HttpMiddleware[];
  handler(ctx: HttpContext, input: RouteInput): Promise<void> | void;
}

export type Route = KoaRoute | LeanRoute;

interface CompiledRoute {
  route: Route;
  query?: ValidateFunction;
  body?: ValidateFunction;
}

function compile(route: Route): CompiledRoute {
  return {
    route,
    query: route.query ? compileSchema(route.query) : undefined,
    body: route.body && route.body !== 'raw' && route.body !== 'stream' ? compileSchema(route.body) : undefined,
  };
}

function handle(compiled: CompiledRoute, bodyLimit: number): HttpMiddleware {
  const { route } = compiled;
  const issues = route.issues ?? defaultIssues;
  return async (ctx) => {
    let query: Record<string, unknown> = ctx.query;
    if (route.query && compiled.query) {
      const coerced = coerceQuery(route.query, ctx.query);
      if ('issue' in coerced) throw issues(coerced.issue);
      if (!compiled.query(coerced.value)) throw issues(issueFrom('query', compiled.query.errors?.[0]));
      query = coerced.value;
    }
    let body: unknown;
    let rawBody: Buffer | undefined;
    if (route.body === 'raw') {
      rawBody = await readRawBody(ctx, bodyLimit);
    } else if (route.body && compiled.body) {
      const parsed = await readJsonBody(ctx, bodyLimit);
      if (!parsed.ok) throw issues({ kind: 'malformed_body', message: parsed.reason });
      if (typeof parsed.value !== 'object' || parsed.value === null || Array.isArray(parsed.value)) {
        throw issues({ kind: 'malformed_body', message: 'The request body must be a JSON object.' });
      }
      if (!compiled.body(parsed.value)) throw issues(issueFrom('body', compiled.body.errors?.[0]));
      body = parsed.value;
    }
    // Path parameters come from the Koa router; lean routes have none.
    const input = { query, body, rawBody, params: (ctx as { params?: Record<string, string> }).params ?? {} };
    // A Koa route's handler is only ever mounted on the Koa router (buildRouter), with a Koa context.
    await (route.lean ? route.handler(ctx, input) : route.handler(ctx as unknown as AppContext, input));
  };
}

/** What runs for a route after the app's own middleware: its `before`, then validation and the handler. */
export function routeChain(route: Route, bodyLimit: number): HttpMiddleware[] {
  return [...(route.deprecated ? [announceDeprecation(route.deprecated)] : []), ...((route.before ?? []) as HttpMiddleware[]), handle(compile(route), bodyLimit)];
}

const toRouterPath = (path: string): string => path.replace(/\{(\w+)\}/g, ':$1');

/** Mounts routes on a router; unknown methods on known paths answer 405 through the problem middleware. */
export function buildRouter(routes: Route[], options: { bodyLimit: number }): Router<RequestState> {
  const router = new Router<RequestState>();
  for (const route of routes) router.register(toRouterPath(route.path), [route.method], routeChain(route, options.bodyLimit) as never);
  return router;
}
