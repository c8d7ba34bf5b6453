/**
 * `npx tsx bench/crawl.ts`: pages per second crawling a local 5,000-page site through the service
 * (API → Temporal → worker → FerretDB) against `CheerioCrawler` (@crawlee/cheerio, the crawler the
 * `crawlee` package exports) on the same site at the same concurrency, one run each; prints both,
 * the ratio (goal ≥ 1.0) and the worker's peak memory (VmHWM of its process).
 *
 * It starts its own stack (FerretDB, Temporal dev server, worker, API) on free ports with a temporary
 * data folder, like the test suite. Options: --pages N (default 5000), --concurrency N (default 10),
 * --skip-baseline.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createAccounts } from '../core/accounts';
import { loadConfig as configFrom, processConfig } from '../base/config';
import { openDatabase } from '../base/db';
import { SERVICE_INDEXES } from '../core/indexes';
import { createLogger } from '../base/log';
import { connectTemporal } from '../base/temporal';
import { crawlWorkflowId } from '../core/jobs/workflow-names';
import { Stack } from '../scripts/stack/stack';
import { startCrawlSite, type CrawlSite } from '../test/fixtures/crawl-site/server';

export interface BenchStack {
  stack: Stack;
  api: string;
  key: string;
  workerPid(): number | undefined;
  close(): Promise<void>;
}

/** A stack of our own on free ports, with an account that has credits enough. */
export async function startBenchStack(env: Record<string, string> = {}): Promise<BenchStack> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'fetchplane-crawl-bench-'));
  const config = { ...processConfig(), dataDir };
  const stack = new Stack({
    config,
    ports: { api: 0, ferretdb: 0, temporal: 0, temporalUi: 0 },
    serviceEnv: {
      LOG_LEVEL: 'warn',
      TARGET_ALLOWLIST: '127.0.0.1,::1,localhost',
      HOST_OVERRIDES: '*.fixture.test=127.0.0.1,fixture.test=127.0.0.1',
      MONGODB_DATABASE: 'fetchplane_crawl_bench',
      TEMPORAL_TASK_QUEUE: 'fetchplane-crawl-bench',
      ...env,
    },
  });
  await stack.start();
  const serviceConfig = configFrom(stack.component('api').spec.env);
  const log = createLogger('error');
  const db = await openDatabase(serviceConfig, log, { indexes: SERVICE_INDEXES });
  const accounts = createAccounts({ db: db.db, config: serviceConfig, log });
  const account = await accounts.store.createAccount({ plan: 'free', overrides: { credits: 10_000_000 } });
  const { key } = await accounts.store.createKey(account._id, {});
  await db.close();
  return {
    stack,
    api: stack.urls.api,
    key,
    workerPid: () => stack.component('worker').pid,
    async close() {
      await stack.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Peak resident memory of a process so far (MiB), from /proc. */
export function peakRssMiB(pid: number | undefined): number | undefined {
  if (!pid) return undefined;
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

export interface ServiceRun {
  crawlId: string;
  seconds: number;
  crawl: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** Starts a crawl through the API and waits for its workflow to return (its last publish is done then). */
export async function crawlThroughService(bench: BenchStack, body: Record<string, unknown>, timeoutMs: number): Promise<ServiceRun> {
  const headers = { 'X-API-Key': bench.key, 'Content-Type': 'application/json' };
  const temporal = connectTemporal(configFrom(bench.stack.component('api').spec.env));
  try {
    const started = Date.now();
    const response = await fetch(`${bench.api}/v1/crawls`, { method: 'POST', headers, body: JSON.stringify(body) });
    const created = (await response.json()) as { crawl_id: string };
    if (response.status !== 202) throw new Error(`crawl refused: ${JSON.stringify(created)}`);
    const crawlId = created.crawl_id;
    const result = temporal.client.workflow.getHandle(crawlWorkflowId(crawlId)).result();
    const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), timeoutMs).unref());
    const outcome = await Promise.race([result, timer]);
    const seconds = (Date.now() - started) / 1000;
    if (outcome === 'timeout') await fetch(`${bench.api}/v1/crawls/${crawlId}/stop`, { method: 'POST', headers });
    const read = await fetch(`${bench.api}/v1/crawls/${crawlId}?limit=1`, { headers });
    const crawl = (await read.json()) as ServiceRun['crawl'];
    if (outcome === 'timeout') throw new Error(`crawl did not finish in ${timeoutMs} ms: ${JSON.stringify({ ...crawl, results: undefined })}`);
    return { crawlId, seconds, crawl };
  } finally {
    await temporal.close();
  }
}

/** CheerioCrawler over the same site, all pages, `concurrency` at once, nothing persisted. */
async function crawlWithCheerio(site: CrawlSite, concurrency: number): Promise<{ pages: number; seconds: number }> {
  const { CheerioCrawler, Configuration, log, LogLevel } = await import('@crawlee/cheerio');
  log.setLevel(LogLevel.OFF);
  let pages = 0;
  const crawler = new CheerioCrawler(
    {
      minConcurrency: concurrency,
      maxConcurrency: concurrency,
      maxRequestsPerCrawl: 1_000_000,
      async requestHandler({ enqueueLinks }) {
        pages++;
        await enqueueLinks();
      },
    },
    new Configuration({ persistStorage: false }),
  );
  const started = Date.now();
  await crawler.run([`http://127.0.0.1:${site.port}/`]);
  return { pages, seconds: (Date.now() - started) / 1000 };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { pages: { type: 'string' }, concurrency: { type: 'string' }, 'skip-baseline': { type: 'boolean' } } });
  const pages = Math.min(50_000, Math.max(100, Number(values.pages ?? 5000) || 5000));
  const concurrency = Math.min(64, Math.max(1, Number(values.concurrency ?? 10) || 10));
  const site = await startCrawlSite({ pages, fanout: 4, padding: 2_000, quiet: true, name: 'bench' });
  const bench = await startBenchStack({ CRAWL_CONCURRENCY: String(concurrency) });
  try {
    process.stdout.write(`site: ${pages} pages, concurrency ${concurrency}, ${os.cpus().length} CPUs, load ${os.loadavg()[0]?.toFixed(1)}\n`);
    const baseline = values['skip-baseline'] ? undefined : await crawlWithCheerio(site, concurrency);
    if (baseline) process.stdout.write(`CheerioCrawler: ${baseline.pages} pages in ${baseline.seconds.toFixed(1)} s = ${(baseline.pages / baseline.seconds).toFixed(1)} pages/s\n`);
    const run = await crawlThroughService(bench, { url: site.url, max_items: 100_000, max_pages: 100_000 }, 30 * 60_000);
    const fetched = run.crawl.coverage.pages_fetched as number;
    const rate = fetched / run.seconds;
    process.stdout.write(`service: ${fetched} pages (${run.crawl.coverage.items_found} results, status ${run.crawl.status}) in ${run.seconds.toFixed(1)} s = ${rate.toFixed(1)} pages/s\n`);
    if (baseline) process.stdout.write(`ratio service / CheerioCrawler: ${(rate / (baseline.pages / baseline.seconds)).toFixed(2)} (goal ≥ 1.0)\n`);
    const peak = peakRssMiB(bench.workerPid());
    process.stdout.write(`worker peak RSS: ${peak === undefined ? 'unknown' : `${peak.toFixed(0)} MiB`}\n`);
  } finally {
    await bench.close();
    await site.close();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  });
}
