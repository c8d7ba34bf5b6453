/**
 * Local fixture servers on loopback: target sites, proxies and webhook receivers that tests start and
 * stop themselves. Every request a fixture receives is recorded for assertions.
 */
import http, { type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface FixtureServer {
  url: string;
  port: number;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startFixtureServer(
  handler: (req: IncomingMessage & { body: Buffer }, res: ServerResponse) => void | Promise<void>,
  options: { host?: string; port?: number } = {},
): Promise<FixtureServer> {
  const requests: RecordedRequest[] = [];
  const listener: RequestListener = (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      requests.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body });
      Promise.resolve(handler(Object.assign(req, { body }), res)).catch((error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      });
    });
  };
  const server = http.createServer(listener);
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
