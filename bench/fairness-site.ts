/**
 * The fairness benchmark's target site (bench/fairness.ts), in a process of its own so serving it
 * (the 9.8 MB nested page above all) does not compete with the benchmark's own measuring for the
 * same event loop: a steady page, the hostile nested page, and a host that answers 429 for ten
 * minutes. It tells its parent its URL once it listens, and ends when the parent says so or goes.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const depth = 900_000;
const nested = Buffer.from(`<html><body>${'<div>'.repeat(depth)}<p>deep</p>${'</div>'.repeat(depth)}</body></html>`);
const site = http.createServer((req, res) => {
  const path = req.url ?? '/';
  if (path.startsWith('/limited')) {
    res.writeHead(429, { 'Retry-After': '600', 'Content-Type': 'text/plain' });
    res.end('slow down');
    return;
  }
  if (path === '/robots.txt') {
    res.writeHead(404);
    res.end();
    return;
  }
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.end(path === '/nested' ? nested : `<html><head><title>Steady</title></head><body><h1>A steady page</h1><p>${path}</p></body></html>`);
});

site.listen(0, '127.0.0.1', () => {
  process.send?.({ url: `http://127.0.0.1:${(site.address() as AddressInfo).port}` });
});
process.on('message', (message: { stop?: boolean }) => {
  if (message.stop) site.close(() => process.exit(0));
});
process.on('disconnect', () => process.exit(0));
