/**
 * The MCP server over Streamable HTTP at `/mcp` on the API listener. The API key comes in
 * `Authorization: Bearer` (an OAuth access token is such a key); without one the answer is 401 with
 * `WWW-Authenticate` naming the protected-resource metadata, as MCP clients expect to discover it.
 *
 * Each session is one MCP server bound to the key that opened it: a request carrying a session id
 * with another account's key is answered as an unknown session. Sessions live in this process's
 * memory, with a bounded event store for resumption (`Last-Event-ID`), and end after 30 idle minutes.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Principal } from '../../core/accounts';
import { isWellFormedKey } from '../../core/accounts/keys';
import type { ApiDeps } from '../deps';
import { BoundedEventStore } from './event-store';
import { createMcpServer } from './server';
import { mcpTools } from './tools';

export const MCP_PATH = '/mcp';
export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

interface Session {
  transport: StreamableHTTPServerTransport;
  accountId: string;
  lastSeen: number;
}

/** A session no request touched for this long is closed: clients that vanish leave nothing behind. */
const SESSION_IDLE_MS = 30 * 60_000;

export interface McpHttp {
  /** Serves the request when it is for `/mcp`; false otherwise. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  close(): Promise<void>;
}

function unauthorized(res: ServerResponse, publicUrl: string, error?: { code: string; description: string }): void {
  const metadata = `${publicUrl}${RESOURCE_METADATA_PATH}`;
  const challenge = error
    ? `Bearer resource_metadata="${metadata}", error="${error.code}", error_description="${error.description}"`
    : `Bearer resource_metadata="${metadata}"`;
  res.writeHead(401, { 'WWW-Authenticate': challenge, 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ error: error?.code ?? 'unauthorized', error_description: error?.description ?? 'An API key or OAuth access token is required as Authorization: Bearer.' }));
}

function jsonRpcError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

export function createMcpHttp(deps: ApiDeps): McpHttp {
  const tools = mcpTools(deps);
  const sessions = new Map<string, Session>();
  const sweeper = setInterval(() => {
    const cutoff = Date.now() - SESSION_IDLE_MS;
    for (const session of sessions.values()) if (session.lastSeen < cutoff) void session.transport.close();
  }, 60_000);
  sweeper.unref();

  async function principalOf(req: IncomingMessage, res: ServerResponse): Promise<Principal | undefined> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!match?.[1]) {
      unauthorized(res, deps.config.publicUrl);
      return undefined;
    }
    const check = isWellFormedKey(match[1]) ? await deps.accounts.keys.check(match[1]) : undefined;
    if (!check?.ok) {
      unauthorized(res, deps.config.publicUrl, { code: 'invalid_token', description: 'The API key or access token is not valid.' });
      return undefined;
    }
    return check.principal;
  }

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const principal = await principalOf(req, res);
    if (!principal) return;
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = sessions.get(sessionId);
      if (!session || session.accountId !== principal.accountId) return jsonRpcError(res, 404, 'Session not found.');
      session.lastSeen = Date.now();
      return session.transport.handleRequest(req, res);
    }
    if (req.method !== 'POST') return jsonRpcError(res, 400, 'Start a session with an initialize request (POST).');
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: new BoundedEventStore(),
      onsessioninitialized: (id) => void sessions.set(id, { transport, accountId: principal.accountId, lastSeen: Date.now() }),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await createMcpServer(tools, principal).connect(transport);
    await transport.handleRequest(req, res);
  }

  return {
    handle(req, res) {
      const path = (req.url ?? '').split('?')[0];
      if (path !== MCP_PATH) return false;
      serve(req, res).catch((error: unknown) => {
        deps.log.error('mcp request failed', { error });
        if (!res.headersSent) jsonRpcError(res, 500, 'Internal error.');
        else res.destroy();
      });
      return true;
    },
    async close() {
      clearInterval(sweeper);
      await Promise.all([...sessions.values()].map((session) => session.transport.close()));
      sessions.clear();
    },
  };
}
