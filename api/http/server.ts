/**
 * The HTTP server of an API listener: Node's server with our time-outs (Node waits 300 s for a request
 * by default, so a slow client holds a socket that long) and our answers where Node would answer by
 * itself (client-errors.ts).
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Config } from '../../base/config';
import { answerClientErrors, requireHost } from './client-errors';

export type ServerConfig = Pick<Config, 'docsUrl' | 'serverHeadersTimeoutMs' | 'serverRequestTimeoutMs'>;

export function createApiServer(listener: (req: IncomingMessage, res: ServerResponse) => void, config: ServerConfig): http.Server {
  const server = http.createServer(
    {
      requireHostHeader: false,
      headersTimeout: Math.min(config.serverHeadersTimeoutMs, config.serverRequestTimeoutMs),
      requestTimeout: config.serverRequestTimeoutMs,
      // How often Node looks for connections past those time-outs (30 s by default, longer than a short time-out itself).
      connectionsCheckingInterval: Math.min(30_000, Math.max(250, Math.floor(config.serverHeadersTimeoutMs / 4))),
    },
    requireHost(listener, config.docsUrl),
  );
  // Longer than the usual load balancer's idle time-out (60 s), so the balancer closes first.
  server.keepAliveTimeout = 65_000;
  answerClientErrors(server, config.docsUrl);
  return server;
}
