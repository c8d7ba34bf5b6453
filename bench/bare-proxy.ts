/**
 * The floor of `fetch-throughput`: a Node HTTP server that fetches `?url=` with undici (keep-alive
 * pool of the same size as the engine's) and answers the body, with nothing else: no key, slot,
 * credits, validation, target checks, header echo, log or metrics. Started as a child process by the
 * benchmark; it reports its port over IPC and exits when the benchmark does.
 */
import http from 'node:http';
import { Agent, request } from 'undici';

const agent = new Agent({ connections: 64, keepAliveTimeout: 10_000 });

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://bare').searchParams.get('url') ?? '';
  request(url, { dispatcher: agent })
    .then(async (response) => {
      const body = Buffer.from(await response.body.arrayBuffer());
      res.writeHead(response.statusCode, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': body.length });
      res.end(body);
    })
    .catch(() => {
      res.writeHead(502).end();
    });
});

server.listen(0, '127.0.0.1', () => {
  process.send?.((server.address() as { port: number }).port);
});
process.on('disconnect', () => process.exit(0));
