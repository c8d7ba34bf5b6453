/**
 * The MCP server over Streamable HTTP at `/mcp` on the API listener. The API key comes in
 * `Authorization: Bearer` (an OAuth access token is such a key); without one the answer is 401 with
 * `WWW-Authenticate` naming the protected-resource metadata, as MCP clients expect to discover it.
 *
 * Each session is bound to the account whose key opened it: a request carrying a session id with
 * another account's key is answered as an unknown session. Sessions end after 30 idle minutes or on
 * the client's DELETE.
 *
 * Several API processes (API_PROCESSES > 1, or replicas behind a load balancer) serve one session:
 * the session is a record in the store (core/mcp/sessions.ts, reached through core/mcp/commands.ts),
 * and a process that gets a request for a session it does not hold rebuilds the server and transport
 * from that record (restore.ts) and keeps them for the session's next requests. Routing requests by session id was the other way; it was
 * not chosen because Node's cluster hands out connections, not requests (a kept-alive connection
 * carries requests of any session, and the first request, `initialize`, has no id to route by), a load
 * balancer would have to learn the ids a replica mints, and a session would die with its process. The
 * SDK's stateless mode (no `sessionIdGenerator`) would scale too, but it drops what sessions give
 * clients today: the id, DELETE ending it, the binding to one account, resumable streams.
 * The price is one read of the record per request (by `_id`) and a write of its idle deadline at most
 * once a minute per process. Every request reads the record, so a session ended or expired anywhere is
 * refused everywhere. A rebuilt server acts for the key of the request that rebuilt it (the same
 * account's). What stays in a process is only what cannot outlive a connection anyway: the open SSE
 * streams and the events kept for resuming them (event-store.ts): a client resuming with
 * `Last-Event-ID` on another process is refused (400) rather than left on a stream nothing writes to.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../../core/accounts';
import { isWellFormedKey } from '../../core/accounts/keys';
import { McpStoreUnavailable, type McpInitialize } from '../../core/mcp/commands';
import { MCP_SESSION_IDLE_MS } from '../../core/services';
import { overBudget } from '../auth/authenticate';
import type { ApiDeps } from '../deps';
import { clientAddress } from '../http/client-address';
import { clientNetwork } from '../../core/accounts/signups';
import { BoundedEventStore } from './event-store';
import { replayInitialize } from './restore';
import { createMcpServer } from './server';
import { mcpTools } from './tools';
import { secondsText } from '../../base/errors';

export const MCP_PATH = '/mcp';
export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

/** A session this process holds: its transport, connected to a server acting for the account. */
interface Held {
  transport: StreamableHTTPServerTransport;
  /** When this process last wrote the session's deadline, and last served it. */
  touched: number;
  used: number;
  /** JSON-RPC ids of requests being answered: a second request with one of them is refused. */
  inFlight: Set<string>;
}

/** The deadline is written at most this often per session and process: one write per request would double the store's load. */
const TOUCH_EVERY_MS = 60_000;
/** How often each process closes what it holds for idle sessions and deletes expired records. */
const SWEEP_EVERY_MS = 60_000;

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

/** Clients are told to come back after this many seconds when the session store is unreachable. */
const RETRY_AFTER_S = 5;

function jsonRpcError(res: ServerResponse, status: number, message: string, code = -32000, more: { id?: string | number; data?: unknown } = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...(status === 503 ? { 'Retry-After': String(RETRY_AFTER_S) } : {}) });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message, ...(more.data !== undefined ? { data: more.data } : {}) }, id: more.id ?? null }));
}

/** The ids of the requests (not notifications or responses) in a JSON-RPC message or batch. */
function requestIds(message: unknown): Array<string | number> {
  const items = Array.isArray(message) ? (message as unknown[]) : [message];
  return items.flatMap((item) => {
    const { id, method } = (item ?? {}) as { id?: unknown; method?: unknown };
    return typeof method === 'string' && (typeof id === 'string' || typeof id === 'number') ? [id] : [];
  });
}

/** The principal a request's key resolved to, where the SDK hands it to the tool handlers. */
function withPrincipal(req: IncomingMessage, principal: Principal): IncomingMessage {
  return Object.assign(req, { auth: { token: '', clientId: principal.keyId, scopes: ['api'], extra: { principal } } });
}

/** The request's body as JSON, read here (not by the SDK) so an `initialize` can be stored before it is answered. */
async function readJson(req: IncomingMessage, limit: number): Promise<{ ok: true; value: unknown } | { ok: false; status: number; message: string; code: number }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return { ok: false, status: 413, message: `The body exceeds ${limit} bytes.`, code: -32000 };
    chunks.push(chunk);
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown };
  } catch {
    return { ok: false, status: 400, message: 'Parse error: Invalid JSON', code: -32700 };
  }
}

export function createMcpHttp(deps: ApiDeps): McpHttp {
  const tools = mcpTools(deps);
  const sessions = deps.services.mcpSessions;
  const held = new Map<string, Held>();
  /** Rebuilds under way, so that concurrent requests for one session rebuild it once. */
  const restoring = new Map<string, Promise<Held>>();

  const sweeper = setInterval(() => {
    const cutoff = Date.now() - MCP_SESSION_IDLE_MS;
    for (const session of held.values()) if (session.used < cutoff) void session.transport.close();
    sessions.sweep().catch((error: unknown) => deps.log.warn('mcp session sweep failed', { error: (error as Error).message }));
  }, SWEEP_EVERY_MS);
  sweeper.unref();

  /** A transport and server for session `id`, acting for `principal`. */
  async function connect(principal: Principal, id: string): Promise<StreamableHTTPServerTransport> {
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      eventStore: new BoundedEventStore(),
      onsessioninitialized: () => void held.set(id, { transport, touched: Date.now(), used: Date.now(), inFlight: new Set() }),
    });
    transport.onclose = () => {
      const id = transport.sessionId;
      if (id && held.get(id)?.transport === transport) held.delete(id);
    };
    await createMcpServer(tools, principal).connect(transport);
    return transport;
  }

  /** The session's transport in this process, rebuilt from its record when another process opened it. */
  function hold(id: string, principal: Principal, initialize: McpInitialize): Promise<Held> {
    const current = held.get(id);
    if (current) return Promise.resolve(current);
    let pending = restoring.get(id);
    if (!pending) {
      pending = (async () => {
        const transport = await connect(principal, id);
        await replayInitialize(transport, initialize);
        const session = held.get(id);
        if (session?.transport !== transport) throw new Error(`session ${id} was not rebuilt`);
        // The record's own last_seen decides the next write of the deadline.
        session.touched = 0;
        return session;
      })().finally(() => restoring.delete(id));
      restoring.set(id, pending);
    }
    return pending;
  }

  async function principalOf(req: IncomingMessage, res: ServerResponse): Promise<Principal | undefined> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!match?.[1]) {
      unauthorized(res, deps.config.publicUrl);
      return undefined;
    }
    // A token no cache knows is looked up only while the client's network has not failed too often (auth-failures.ts).
    const network = (): string => clientNetwork(clientAddress({ get: (name) => String(req.headers[name.toLowerCase()] ?? ''), req }, deps.config.trustProxy));
    const check = isWellFormedKey(match[1]) ? await deps.accounts.keys.check(match[1], { network }) : undefined;
    if (check && !check.ok && check.reason === 'throttled') {
      // Held a moment and the connection closed, as on the REST surfaces (api/auth/authenticate.ts).
      await deps.accounts.refusalHold.hold(network());
      res.writeHead(429, { 'Retry-After': String(check.retryAfterSeconds), 'Content-Type': 'application/json', Connection: 'close' });
      res.end(JSON.stringify({ error: 'rate_limited', error_description: `Too many requests from this network carried tokens that are not valid; retry in ${secondsText(check.retryAfterSeconds)}.` }));
      return undefined;
    }
    if (!check?.ok) {
      unauthorized(res, deps.config.publicUrl, { code: 'invalid_token', description: 'The API key or access token is not valid.' });
      return undefined;
    }
    return check.principal;
  }

  async function serveSession(req: IncomingMessage, res: ServerResponse, principal: Principal, id: string): Promise<void> {
    const resumed = await sessions.resume(principal, id);
    if (!resumed.ok) {
      // Ended or expired elsewhere (or never this account's): whatever this process holds goes too.
      if (resumed.ended) void held.get(id)?.transport.close();
      return jsonRpcError(res, 404, 'Session not found.', -32001);
    }
    const record = resumed.session;
    if (req.method === 'DELETE') {
      // The client ends the session: for every process (the record), then here.
      await sessions.end(principal, id);
      await held.get(id)?.transport.close();
      res.writeHead(200).end();
      return;
    }
    const session = await hold(id, principal, record.initialize);
    const now = Date.now();
    session.used = now;
    if (now - Math.max(session.touched, record.lastSeen) >= TOUCH_EVERY_MS) {
      session.touched = now;
      await sessions.touch(id);
    }
    if (req.method !== 'POST') return session.transport.handleRequest(withPrincipal(req, principal), res);
    const body = await readJson(req, deps.config.bodyLimit);
    if (!body.ok) return jsonRpcError(res, body.status, body.message, body.code);
    // Two requests in flight with one id would share one answer and leave a stream open for ever:
    // the second is refused and its stream closed.
    const ids = requestIds(body.value).map((value) => `${typeof value}:${String(value)}`);
    const duplicate = ids.findIndex((key, index) => session.inFlight.has(key) || ids.indexOf(key) !== index);
    if (duplicate >= 0) return jsonRpcError(res, 409, 'A request with this id is already in flight in this session.', -32600, { id: requestIds(body.value)[duplicate] });
    for (const key of ids) session.inFlight.add(key);
    res.once('close', () => {
      for (const key of ids) session.inFlight.delete(key);
    });
    return session.transport.handleRequest(withPrincipal(req, principal), res, body.value);
  }

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const principal = await principalOf(req, res);
    if (!principal) return;
    // The account's request budget, as on the REST surfaces (api/auth/authenticate.ts); a stream
    // counts as in flight until it closes.
    const admitted = deps.accounts.budget.take(principal.accountId, principal.plan.limits);
    if (!admitted.ok) {
      await deps.accounts.budget.hold(principal.accountId, admitted);
      const refusal = overBudget(admitted);
      res.setHeader('Retry-After', String(admitted.retryAfterSeconds));
      return jsonRpcError(res, 429, refusal.detail, -32000, { data: { code: 'rate_limited', ...refusal.members } });
    }
    res.once('close', admitted.done);
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') return serveSession(req, res, principal, sessionId);
    if (req.method !== 'POST') return jsonRpcError(res, 400, 'Start a session with an initialize request (POST).');
    const body = await readJson(req, deps.config.bodyLimit);
    if (!body.ok) return jsonRpcError(res, body.status, body.message, body.code);
    if (!isInitializeRequest(body.value)) return jsonRpcError(res, 400, 'Start a session with an initialize request (POST).');
    // Stored before the answer leaves: the client's next request may reach another process.
    const opened = await sessions.open(principal, body.value.params as McpInitialize);
    if (!opened.ok) {
      return jsonRpcError(res, 429, opened.refusal.detail, -32000, {
        id: (body.value as { id?: string | number }).id,
        data: { code: 'quota_exceeded', ...opened.refusal.members },
      });
    }
    const { id } = opened;
    const transport = await connect(principal, id);
    await transport.handleRequest(withPrincipal(req, principal), res, body.value);
    // Refused by the transport (a wrong Accept header...): no session came of it.
    if (transport.sessionId === undefined) await sessions.end(principal, id);
  }

  return {
    handle(req, res) {
      const path = (req.url ?? '').split('?')[0];
      if (path !== MCP_PATH) return false;
      serve(req, res).catch((error: unknown) => {
        const unavailable = error instanceof McpStoreUnavailable;
        if (unavailable) deps.log.warn('mcp session store unreachable', { error: error.message });
        else deps.log.error('mcp request failed', { error });
        if (!res.headersSent) jsonRpcError(res, unavailable ? 503 : 500, unavailable ? 'Service unavailable: retry shortly.' : 'Internal error.');
        else res.destroy();
      });
      return true;
    },
    async close() {
      // The sessions stay in the store: another process (or this one, restarted) serves them next.
      clearInterval(sweeper);
      await Promise.all([...held.values()].map((session) => session.transport.close()));
      held.clear();
    },
  };
}
