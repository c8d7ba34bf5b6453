/**
 * The OpenAPI 3.1 document, generated from the route declarations: the schemas that validate
 * requests are the schemas that are published, and the errors are declared as each surface renders
 * them (problem documents, the agent surfaces' `{error, message}`, OAuth's own).
 */
import { ERROR_CATALOGUE } from '../../base/errors';
import { isAgentPath } from './problem-middleware';
import type { JsonSchema, ResponseSpec, Route } from './routes';

export const PROBLEM_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['code', 'status', 'title', 'detail', 'type', 'instance'],
  properties: {
    code: { type: 'string', enum: Object.keys(ERROR_CATALOGUE) },
    status: { type: 'integer' },
    title: { type: 'string' },
    detail: { type: 'string' },
    type: { type: 'string', format: 'uri' },
    instance: { type: 'string' },
    reason: { type: 'string' },
  },
};

/** What the agent surfaces (`/api/agent/*`) answer on every error, 4xx and 5xx alike. */
export const AGENT_ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['error', 'message'],
  properties: { error: { type: 'string', description: 'Stable code, for example rate_limited.' }, message: { type: 'string' } },
};

const PROBLEM_RESPONSE: ResponseSpec = {
  description: 'Error',
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
};

const AGENT_ERROR_RESPONSE: ResponseSpec = {
  description: 'Error, as `{error, message}`',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/AgentError' } } },
};

/** The error responses of a route: its own, the agent envelope, or problem documents. */
function errorResponseOf(route: Route): ResponseSpec {
  return route.errorResponse ?? (isAgentPath(route.path) ? AGENT_ERROR_RESPONSE : PROBLEM_RESPONSE);
}

/** A declared response without content is an error the route answers in its error envelope. */
function withContent(response: ResponseSpec, status: number, route: Route): ResponseSpec {
  if (response.content || status < 400) return response;
  return { ...errorResponseOf(route), ...response, content: errorResponseOf(route).content };
}

const DEPRECATION_HEADERS: NonNullable<ResponseSpec['headers']> = {
  Deprecation: { description: 'When this operation was deprecated (RFC 9745), as `@<unix seconds>`.', schema: { type: 'string' } },
  Sunset: { description: 'When this operation stops answering (RFC 8594), when decided.', schema: { type: 'string' } },
  Link: { description: 'Where the change is explained (`rel="deprecation"`).', schema: { type: 'string' } },
};

/** A deprecated route's answers carry its deprecation headers. */
function withDeprecation(response: ResponseSpec, route: Route): ResponseSpec {
  return route.deprecated ? { ...response, headers: { ...response.headers, ...DEPRECATION_HEADERS } } : response;
}

/** Surfaces the document describes; Batch is listed once its routes are mounted. */
function describeServed(routes: Route[]): string {
  const tags = new Set(routes.filter((route) => !route.internal).flatMap((route) => route.tags));
  const served = ['Fetch', 'Documents', 'Extract', 'Crawl', 'Batch', 'Batch webhooks', 'Plan usage', 'Agent signup', 'MCP', 'OAuth'].filter((tag) => tags.has(tag));
  return `Web data retrieval. Served here: ${served.join(', ')}.`;
}

export function buildOpenApi(routes: Route[], options: { serverUrl: string }): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    if (route.internal) continue;
    // The key is declared once, as a security scheme, not as a parameter of every operation.
    const keyInQuery = route.security?.includes('apiKeyQuery') ?? false;
    const parameters = [
      ...[...route.path.matchAll(/\{(\w+)\}/g)].map((match) => ({
        name: match[1],
        in: 'path',
        required: true,
        schema: { type: 'string' },
      })),
      ...Object.entries(route.query?.properties ?? {})
        .filter(([name]) => !(keyInQuery && name === 'apikey'))
        .map(([name, schema]) => ({
          name,
          in: 'query',
          required: route.query?.required?.includes(name) ?? false,
          ...(typeof schema.description === 'string' ? { description: schema.description } : {}),
          schema,
        })),
    ];
    const responses: Record<string, unknown> = Object.fromEntries(
      Object.entries(route.responses).map(([status, response]) => [status, withDeprecation(withContent(response, Number(status), route), route)]),
    );
    responses.default = errorResponseOf(route);
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      tags: route.tags,
      ...(route.description ? { description: route.description } : {}),
      ...(route.deprecated ? { deprecated: true } : {}),
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(route.security ? { security: route.security.map((scheme) => ({ [scheme]: [] })) } : { security: [] }),
      responses,
    };
    if (route.body === 'raw' || route.body === 'stream') {
      operation.requestBody = route.rawContent ? { required: true, content: route.rawContent } : { required: false, content: { '*/*': { schema: {} } } };
    } else if (route.body) {
      // An empty body reads as `{}`: the body is required only when the schema requires a field.
      operation.requestBody = { required: (route.body.required ?? []).length > 0, content: { 'application/json': { schema: route.body } } };
    }
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Fetchplane',
      version: '1.0.0',
      description: describeServed(routes),
    },
    servers: [{ url: options.serverUrl }],
    paths,
    components: {
      schemas: { Problem: PROBLEM_SCHEMA, AgentError: AGENT_ERROR_SCHEMA },
      securitySchemes: {
        apiKeyQuery: { type: 'apiKey', in: 'query', name: 'apikey' },
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      },
    },
  };
}
