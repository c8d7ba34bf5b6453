/**
 * Routes are declared as data: method, path, the JSON Schemas of their query and body, their
 * responses. The same declaration validates requests (ajv) and feeds the OpenAPI document, so a
 * parameter added to a schema is checked and documented at once.
 */
import Router from '@koa/router';
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Middleware } from 'koa';
import { parseBoolean } from '../../core/boolean';
import { problem, type ApiError, type ErrorCode } from '../../core/errors';
import { readJsonBody, readRawBody } from './body';
import { announceDeprecation, type Deprecation } from './deprecation';

export type { Deprecation } from './deprecation';
import type { AppContext, HttpContext, HttpMiddleware, ParsedQuery, RequestState } from './context';

export type JsonSchema = Record<string, unknown>;

export interface ObjectSchema extends JsonSchema {
  type: 'object';
  properties: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean;
}

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** What went wrong with a request, before a surface turns it into its own error code. */
export type ValidationIssue =
  | { kind: 'malformed_body'; message: string }
  | { kind: 'unknown'; where: 'query' | 'body'; field: string }
  | { kind: 'missing'; where: 'query' | 'body'; field: string }
  | { kind: 'invalid'; where: 'query' | 'body'; field: string; message: string };

export type IssueMapper = (issue: ValidationIssue) => ApiError;

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

/** What a validation failure says, the field named. */
export function issueMessage(issue: ValidationIssue): string {
  switch (issue.kind) {
    case 'malformed_body':
      return issue.message;
    case 'unknown':
      return `Unknown ${issue.where === 'query' ? 'query parameter' : 'field'} "${issue.field}".`;
    case 'missing':
      return `"${issue.field}" is required.`;
    case 'invalid':
      return `"${issue.field}" ${issue.message}.`;
  }
}

/** The default mapping, as the Crawl surface spells its codes. */
export const defaultIssues: IssueMapper = (issue) => {
  const code = { malformed_body: 'invalid_request', unknown: 'unknown_parameter', missing: 'invalid_parameter', invalid: 'invalid_parameter' } as const;
  return problem(code[issue.kind], issueMessage(issue));
};

/** Every failure as one code (Batch and Extract spell them so), with extra members such as a `reason`. */
export const issuesAs =
  (code: ErrorCode, members: (issue: ValidationIssue) => Record<string, unknown> = () => ({})): IssueMapper =>
  (issue) =>
    problem(code, issueMessage(issue), { members: members(issue) });

const ajv = new Ajv2020({ allErrors: false, strict: true, useDefaults: false });
addFormats(ajv);

/** Query values arrive as strings; this turns them into what the schema declares, or says why not. */
function coerceQuery(
  schema: ObjectSchema,
  query: ParsedQuery,
): { value: Record<string, unknown> } | { issue: ValidationIssue } {
  const value: Record<string, unknown> = {};
  for (const [name, given] of Object.entries(query)) {
    if (given === undefined) continue;
    // Own properties only: `__proto__` or `constructor` are unknown parameters, not Object's members.
    const property = Object.hasOwn(schema.properties, name) ? schema.properties[name] : undefined;
    if (!property) {
      if (schema.additionalProperties === false) return { issue: { kind: 'unknown', where: 'query', field: name } };
      value[name] = given;
      continue;
    }
    if (Array.isArray(given)) {
      return { issue: { kind: 'invalid', where: 'query', field: name, message: 'is given more than once' } };
    }
    const coerced = coerceScalar(property.type, given);
    if (coerced === invalidScalar) {
      return { issue: { kind: 'invalid', where: 'query', field: name, message: `must be ${describeType(property.type)}` } };
    }
    value[name] = coerced;
  }
  return { value };
}

const invalidScalar = Symbol('invalid');

function coerceScalar(type: unknown, raw: string): unknown {
  switch (type) {
    case 'boolean':
      return parseBoolean(raw) ?? invalidScalar;
    case 'integer':
      return /^-?\d{1,15}$/.test(raw.trim()) ? Number(raw) : invalidScalar;
    case 'number':
      return raw.trim() !== '' && Number.isFinite(Number(raw)) ? Number(raw) : invalidScalar;
    default:
      return raw;
  }
}

const describeType = (type: unknown): string =>
  type === 'boolean' ? 'true or false' : type === 'integer' ? 'an integer' : type === 'number' ? 'a number' : 'a string';

function issueFrom(where: 'query' | 'body', error: ErrorObject | undefined): ValidationIssue {
  const base = error?.instancePath.replace(/^\//, '').replace(/\//g, '.') ?? '';
  const field = (name: string) => (base ? `${base}.${name}` : name);
  if (error?.keyword === 'additionalProperties') {
    return { kind: 'unknown', where, field: field(String(error.params.additionalProperty)) };
  }
  if (error?.keyword === 'required') {
    return { kind: 'missing', where, field: field(String(error.params.missingProperty)) };
  }
  return { kind: 'invalid', where, field: base || '(body)', message: error?.message ?? 'is invalid' };
}

/**
 * A query validated the way a route validates it (strings coerced to the declared types), for callers
 * that reuse a route's parameters without an HTTP request (the MCP tools).
 */
export function checkQuery(schema: ObjectSchema, query: ParsedQuery, issues: IssueMapper = defaultIssues): Record<string, unknown> {
  const coerced = coerceQuery(schema, query);
  if ('issue' in coerced) throw issues(coerced.issue);
  const validate = ajv.compile(schema);
  if (!validate(coerced.value)) throw issues(issueFrom('query', validate.errors?.[0]));
  return coerced.value;
}

/** A JSON body validated the way a route validates it. */
export function checkBody(schema: ObjectSchema, value: unknown, issues: IssueMapper = defaultIssues): Record<string, unknown> {
  const validate = ajv.compile(schema);
  if (!validate(value)) throw issues(issueFrom('body', validate.errors?.[0]));
  return value as Record<string, unknown>;
}

interface CompiledRoute {
  route: Route;
  query?: ValidateFunction;
  body?: ValidateFunction;
}

function compile(route: Route): CompiledRoute {
  return {
    route,
    query: route.query ? ajv.compile(route.query) : undefined,
    body: route.body && route.body !== 'raw' && route.body !== 'stream' ? ajv.compile(route.body) : undefined,
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
