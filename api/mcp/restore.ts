/**
 * Rebuilds, in this process, a session another process opened: the client's stored `initialize` is
 * replayed through a fresh transport whose session id generator returns the stored id, so the SDK's
 * transport (session id, initialized state) and server (negotiated protocol version, client
 * capabilities and info) end up exactly as on the process that answered the client. Only public API
 * is used: the request and response are Node's own classes, not attached to a connection, and the
 * answer (the initialize result the client already has) is read only to check it succeeded.
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { McpInitialize } from '../../core/mcp/commands';

export async function replayInitialize(transport: StreamableHTTPServerTransport, initialize: McpInitialize): Promise<void> {
  const req = new IncomingMessage(new Socket());
  req.method = 'POST';
  req.url = '/mcp';
  req.headers = { host: 'localhost', accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
  req.rawHeaders = Object.entries(req.headers).flatMap(([name, value]) => [name, String(value)]);
  req.push(null);
  const res = new ServerResponse(req);
  // Nothing is sent anywhere: the answer's bytes are dropped, its end awaited.
  const ended = new Promise<void>((resolve) => {
    res.write = (() => true) as typeof res.write;
    res.end = ((): ServerResponse => {
      resolve();
      return res;
    }) as typeof res.end;
  });
  await transport.handleRequest(req, res, { jsonrpc: '2.0', id: 0, method: 'initialize', params: initialize });
  await ended;
  if (res.statusCode !== 200 || transport.sessionId === undefined) throw new Error(`replaying initialize answered ${res.statusCode}`);
}
