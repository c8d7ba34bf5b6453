/**
 * Discovery for MCP clients: the protected-resource metadata (RFC 9728) of the `/mcp` endpoint, naming
 * this service as its authorization server (api/oauth).
 */
import type { ApiDeps } from '../deps';
import type { Route } from '../http/routes';
import { MCP_PATH, RESOURCE_METADATA_PATH } from './http';

export function mcpRoutes(deps: Pick<ApiDeps, 'config'>): Route[] {
  const { publicUrl } = deps.config;
  return [
    {
      method: 'GET',
      path: RESOURCE_METADATA_PATH,
      operationId: 'getProtectedResourceMetadata',
      summary: 'Protected-resource metadata of the MCP endpoint (RFC 9728).',
      tags: ['MCP'],
      responses: { 200: { description: 'The metadata', content: { 'application/json': {} } } },
      handler(ctx) {
        ctx.set('Cache-Control', 'public, max-age=3600');
        ctx.body = {
          resource: `${publicUrl}${MCP_PATH}`,
          authorization_servers: [publicUrl],
          bearer_methods_supported: ['header'],
          scopes_supported: ['api'],
          resource_name: 'Fetchplane MCP server',
          resource_documentation: `${publicUrl}/docs`,
        };
      },
    },
  ];
}
