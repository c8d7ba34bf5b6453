/**
 * `npx tsx bench/politeness.ts`: the installation-wide host gate under load, through the service
 * (API → Temporal → worker → FerretDB), against a local site whose host has a budget of 10 request
 * starts a second (`HOST_BUDGETS`). It prints:
 *
 * - the rate measured at the host while 3 crawls and 1 Batch run share it: the most requests that
 *   arrived within any 5 s window, divided by 5 (goal ≤ 10.5 req/s);
 * - pages per second of the four jobs together against one crawl alone on the same host (goal ≥ 0.9:
 *   sharing costs nothing but the budget);
 * - pages per second of one crawl over many hosts with no budget (`--many-hosts-only` runs just this,
 *   so the same file can measure a build without the gate for the comparison).
 *
 * Options: --pages N (pages per job, default 100), --hosts N (many-host crawl, default 50),
 * --many-pages N (default 2000), --many-hosts-only.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { createAccounts } from '../core/accounts';
import { loadConfig } from '../base/config';
import { openDatabase } from '../base/db';
import { createLogger } from '../base/log';
import { crawlThroughService, startBenchStack, type BenchStack } from './crawl';

interface Site {
  port: number;
  /** Arrival times of requests, by host label. */
  arrivals: Map<string, number[]>;
  close(): Promise<void>;
}

/** Lanes of pages on one host (`/<lane>/` links to its pages) and a many-host web of pages. */
async function startSite(options: { pages: number; hosts: number; manyPages: number; delayMs: number }): Promise<Site> {
  const arrivals = new Map<string, number[]>();
  const server = http.createServer((req, res) => {
    const host = (req.headers.host ?? '').split(':')[0]!;
    const label = host.split('.')[0]!;
    const list = arrivals.get(label) ?? [];
    list.push(Date.now());
    arrivals.set(label, list);
    const path = req.url ?? '/';
    setTimeout(() => {
      if (path === '/robots.txt') {
        res.writeHead(404);
        res.end();
        return;
      }
      let links: string[] = [];
      const lane = /^\/(\w+)\/$/.exec(path)?.[1];
      if (lane && !host.includes('.many.')) links = Array.from({ length: options.pages - 1 }, (_, index) => `/${lane}/${index}`);
      const page = /^\/p\/(\d+)$/.exec(path)?.[1];
      if (host.includes('.many.') && (page !== undefined || path === '/')) {
        const at = Number(page ?? 0);
        links = [1, 2, 3, 4].map((step) => {
          const next = (at * 7 + step * 131) % options.manyPages;
          return `http://h${next % options.hosts}.many.fixture.test:${port}/p/${next}`;
        });
      }
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><html><body><h1>${path}</h1>${links.map((href) => `<a href="${href}">${href}</a>`).join('')}<p>${'Lorem ipsum. '.repeat(100)}</p></body></html>`);
    }, options.delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { port, arrivals, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

function busiestWindow(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  let from = 0;
  for (let to = 0; to < sorted.length; to++) {
    while (sorted[to]! - sorted[from]! >= windowMs) from++;
    best = Math.max(best, to - from + 1);
  }
  return best;
}

/** A second account (an account runs at most 3 jobs at once; the Batch run is another account's). */
async function secondKey(bench: BenchStack): Promise<string> {
  const config = loadConfig(bench.stack.component('api').spec.env);
  const log = createLogger('error');
  const db = await openDatabase(config, log);
  try {
    const accounts = createAccounts({ db: db.db, config, log });
    const account = await accounts.store.createAccount({ plan: 'free', overrides: { credits: 10_000_000 } });
    return (await accounts.store.createKey(account._id, {})).key;
  } finally {
    await db.close();
  }
}

async function batchRun(bench: BenchStack, key: string, urls: string[], timeoutMs: number): Promise<{ successful: number; seconds: number }> {
  const headers = { 'X-API-Key': key, 'Content-Type': 'application/json' };
  const started = Date.now();
  const response = await fetch(`${bench.api}/v1/jobs`, { method: 'POST', headers, body: JSON.stringify({ type: 'regular', status: 'closed', tasks: urls.map((url) => ({ url })) }) });
  const created = (await response.json()) as { job_id: string };
  if (response.status !== 201) throw new Error(`batch refused: ${JSON.stringify(created)}`);
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; ) {
    const job = (await (await fetch(`${bench.api}/v1/jobs/${created.job_id}`, { headers })).json()) as { latest_run?: { status: string; stats: { successful: number } } };
    const run = job.latest_run;
    if (run && ['completed', 'failed', 'stopped'].includes(run.status)) return { successful: run.stats.successful, seconds: (Date.now() - started) / 1000 };
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error('batch run did not end in time');
}

/** What one start slot costs: sequential inserts with unique keys into a scratch collection, in ms each. */
async function slotInsertMs(bench: BenchStack, count: number): Promise<number> {
  const db = await openDatabase(loadConfig(bench.stack.component('api').spec.env), createLogger('error'));
  try {
    const scratch = db.db.collection<{ _id: string; expires_at: Date }>('bench_slots');
    const started = process.hrtime.bigint();
    for (let index = 0; index < count; index++) await scratch.insertOne({ _id: `bench.host|100|${String(index).padStart(14, '0')}`, expires_at: new Date() });
    const ms = Number(process.hrtime.bigint() - started) / 1e6 / count;
    await scratch.drop();
    return ms;
  } finally {
    await db.close();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { pages: { type: 'string' }, hosts: { type: 'string' }, 'many-pages': { type: 'string' }, 'many-hosts-only': { type: 'boolean' } } });
  const pages = Math.min(2_000, Math.max(20, Number(values.pages ?? 100) || 100));
  const hosts = Math.min(500, Math.max(2, Number(values.hosts ?? 50) || 50));
  const manyPages = Math.min(20_000, Math.max(100, Number(values['many-pages'] ?? 2000) || 2000));
  const site = await startSite({ pages, hosts, manyPages, delayMs: 20 });
  const bench = await startBenchStack({ HOST_BUDGETS: 'paced.fixture.test=10/8', CRAWL_CONCURRENCY: '10' });
  const base = (label: string) => `http://${label}.fixture.test:${site.port}`;
  try {
    process.stdout.write(`${os.cpus().length} CPUs, load ${os.loadavg()[0]?.toFixed(1)}; ${pages} pages per job, many-host crawl: ${manyPages} pages on ${hosts} hosts\n`);
    if (!values['many-hosts-only']) {
      process.stdout.write(`one start slot (an insert with a unique key): ${(await slotInsertMs(bench, 300)).toFixed(2)} ms\n`);
      // One crawl alone at the budgeted host.
      const alone = await crawlThroughService(bench, { url: `${base('paced')}/s/`, max_items: 100_000, max_pages: 100_000 }, 10 * 60_000);
      const aloneRate = alone.crawl.coverage.pages_fetched / alone.seconds;
      process.stdout.write(`one crawl alone: ${alone.crawl.coverage.pages_fetched} pages in ${alone.seconds.toFixed(1)} s = ${aloneRate.toFixed(2)} pages/s\n`);

      const from = Date.now();
      const jobs = await Promise.all([
        ...['a', 'b', 'c'].map((lane) => crawlThroughService(bench, { url: `${base('paced')}/${lane}/`, max_items: 100_000, max_pages: 100_000 }, 10 * 60_000)),
        batchRun(bench, await secondKey(bench), Array.from({ length: pages }, (_, index) => `${base('paced')}/t/${index}`), 10 * 60_000),
      ]);
      const seconds = (Date.now() - from) / 1000;
      const crawled = jobs.slice(0, 3).reduce((sum, job) => sum + ('crawl' in job ? (job.crawl.coverage.pages_fetched as number) : 0), 0);
      const batched = (jobs[3] as { successful: number }).successful;
      const togetherRate = (crawled + batched) / seconds;
      const during = (site.arrivals.get('paced') ?? []).filter((at) => at >= from);
      const busiest = busiestWindow(during, 5_000);
      process.stdout.write(`4 jobs together: ${crawled} crawl pages + ${batched} Batch pages in ${seconds.toFixed(1)} s = ${togetherRate.toFixed(2)} pages/s\n`);
      process.stdout.write(`rate at the host: busiest 5 s window ${busiest} requests = ${(busiest / 5).toFixed(2)} req/s (goal ≤ 10.5); mean ${(during.length / seconds).toFixed(2)} req/s\n`);
      process.stdout.write(`together / alone: ${(togetherRate / aloneRate).toFixed(2)} (goal ≥ 0.9)\n`);
    }
    const many = await crawlThroughService(bench, { url: `${base('h0.many')}/`, max_items: 100_000, max_pages: 100_000 }, 20 * 60_000);
    const manyRate = many.crawl.coverage.pages_fetched / many.seconds;
    process.stdout.write(`many hosts: ${many.crawl.coverage.pages_fetched} pages on ${hosts} hosts in ${many.seconds.toFixed(1)} s = ${manyRate.toFixed(1)} pages/s\n`);
  } finally {
    await bench.close();
    await site.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
