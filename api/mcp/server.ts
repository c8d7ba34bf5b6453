/**
 * An MCP server speaking for one principal: the tools of tools.ts, listed with their JSON Schemas and
 * called on behalf of the account whose key (or OAuth token) opened the connection.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../../core/accounts';
import { callTool, type ToolDefinition } from './tools';

export const SERVER_INFO = { name: 'fetchplane', version: '0.1.0' };

export function createMcpServer(tools: ToolDefinition[], principal: Principal): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: {} },
    instructions: 'Web data retrieval: fetch_page for one page (Markdown by default), extract for structured data, crawl_* to collect a site, plan_usage for credits left.',
  });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
  }));
  // Each request carries the principal its own key resolved to (http.ts): a session never acts on a
  // key revoked, capped or moved to another plan since it opened.
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    callTool(tools, (extra.authInfo?.extra?.principal as Principal | undefined) ?? principal, request.params.name, request.params.arguments ?? {}, extra.signal),
  );
  return server;
}
