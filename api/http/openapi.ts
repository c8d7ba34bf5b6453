/**
 * The OpenAPI 3.1 document, generated from the route declarations: the schemas that validate
 * requests are the schemas that are published.
 */
import { ERROR_CATALOGUE } from '../../core/errors';
import type { JsonSchema, Route } from './routes';

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

export function buildOpenApi(routes: Route[], options: { serverUrl: string }): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    if (route.internal) continue;
    const parameters = [
      ...[...route.path.matchAll(/\{(\w+)\}/g)].map((match) => ({
        name: match[1],
        in: 'path',
        required: true,
        schema: { type: 'string' },
      })),
      ...Object.entries(route.query?.properties ?? {}).map(([name, schema]) => ({
        name,
        in: 'query',
        required: route.query?.required?.includes(name) ?? false,
        ...(typeof schema.description === 'string' ? { description: schema.description } : {}),
        schema,
      })),
    ];
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      tags: route.tags,
      ...(route.description ? { description: route.description } : {}),
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(route.security ? { security: route.security.map((scheme) => ({ [scheme]: [] })) } : { security: [] }),
      responses: Object.fromEntries(
        Object.entries(route.responses).map(([status, response]) => [status, response]),
      ),
    };
    if (route.body === 'raw') {
      operation.requestBody = { required: false, content: { '*/*': { schema: {} } } };
    } else if (route.body) {
      operation.requestBody = { required: true, content: { 'application/json': { schema: route.body } } };
    }
    (operation.responses as Record<string, unknown>).default = {
      description: 'Error',
      content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
    };
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Fetchplane',
      version: '1.0.0',
      description: 'Web data retrieval: Fetch, Extract, Crawl and Batch.',
    },
    servers: [{ url: options.serverUrl }],
    paths,
    components: {
      schemas: { Problem: PROBLEM_SCHEMA },
      securitySchemes: {
        apiKeyQuery: { type: 'apiKey', in: 'query', name: 'apikey' },
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      },
    },
  };
}
