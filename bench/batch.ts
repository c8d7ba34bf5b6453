/**
 * `npx tsx bench/batch.ts`: a Batch job of 100,000 URLs against a local site, through the service (its
 * own stack on free ports), against a plain undici loop over the same URLs at the same concurrency,
 * measured in the same run. Prints:
 *   - URLs per second of both, and their ratio (goal ≥ 0.5);
 *   - the worker's and the API's peak RSS (goal < 1 GB each);
 *   - the time from the last task's end to the run's `completed` state;
 *   - the time to page through every result.
 * Options: --urls N (default 100,000), --concurrency C (default 32), --timeout-min M (default 60).
 * The job is submitted as the clients do: an open job, then calls of 10,000 tasks, the last with
 * `last_batch: true`.
 */
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { startFixtureServer } from '../test/helpers/fixtures';
import { peakRssMiB, startBenchStack } from './crawl';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function call(api: string, key: string, method: string, path: string, body?: unknown): Promise<Json> {
  const response = await fetch(`${api}${path}`, {
    method,
    headers: { 'X-API-Key': key, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  if (response.status >= 400) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
  return text ? (JSON.parse(text) as Json) : {};
}

async function plainLoop(urls: string[], concurrency: number): Promise<number> {
  const dispatcher = new Agent({ connections: concurrency });
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const url = urls[next++];
        if (url === undefined) return;
        const response = await request(url, { dispatcher });
        await response.body.arrayBuffer();
      }
    }),
  );
  await dispatcher.close();
  return (performance.now() - started) / 1000;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { urls: { type: 'string' }, concurrency: { type: 'string' }, 'timeout-min': { type: 'string' } } });
  const count = Math.min(100_000, Math.max(100, Number(values.urls ?? 100_000) || 100_000));
  const concurrency = Math.min(256, Math.max(1, Number(values.concurrency ?? 32) || 32));
  const timeoutMs = Math.min(240, Math.max(1, Number(values['timeout-min'] ?? 60) || 60)) * 60_000;
  const page = `<html><head><title>t</title></head><body>${'<p>lorem ipsum dolor sit amet</p>'.repeat(30)}</body></html>`;
  const site = await startFixtureServer((_req, res) => {
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end(page);
  });
  const bench = await startBenchStack({ BATCH_CONCURRENCY: String(concurrency), FREE_PLAN_CONCURRENCY: String(concurrency) });
  try {
    const urls = Array.from({ length: count }, (_, index) => `${site.url}p/${index}`);
    const plainSeconds = await plainLoop(urls, concurrency);
    process.stdout.write(`plain undici loop: ${count} URLs in ${plainSeconds.toFixed(1)} s (${(count / plainSeconds).toFixed(0)} URLs/s) at concurrency ${concurrency}\n`);

    const started = performance.now();
    const created = await call(bench.api, bench.key, 'POST', '/v1/jobs', { type: 'regular', status: 'open', tasks: [] });
    const job = created.job_id as string;
    for (let from = 0; from < count; from += 10_000) {
      const tasks = urls.slice(from, from + 10_000).map((url) => ({ url }));
      await call(bench.api, bench.key, 'POST', `/v1/jobs/${job}/tasks`, { tasks, ...(from + 10_000 >= count ? { last_batch: true } : {}) });
    }
    const submitted = performance.now();
    let run: Json = created.latest_run as Json;
    while (!['completed', 'failed', 'stopped'].includes(run.status as string)) {
      if (performance.now() - started > timeoutMs) {
        await call(bench.api, bench.key, 'POST', `/v1/jobs/${job}/stop`);
        throw new Error(`the run did not end within the time-out: ${JSON.stringify(run.stats)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
      run = (await call(bench.api, bench.key, 'GET', `/v1/jobs/${job}`)).latest_run as Json;
    }
    const serviceSeconds = (performance.now() - started) / 1000;
    process.stdout.write(
      `service: ${run.stats.completed} of ${count} URLs ${run.status} in ${serviceSeconds.toFixed(1)} s (${(count / serviceSeconds).toFixed(0)} URLs/s), ` +
        `submission ${((submitted - started) / 1000).toFixed(1)} s of it\n`,
    );
    process.stdout.write(`ratio of URLs/s, service / plain loop: ${(plainSeconds / serviceSeconds).toFixed(2)} (goal ≥ 0.5)\n`);

    const pagingStarted = performance.now();
    let rows = 0;
    let lastEnd = 0;
    const seen = new Set<string>();
    let cursor: string | null = null;
    do {
      const pageOf: Json = await call(bench.api, bench.key, 'GET', `/v1/jobs/${job}/results${cursor ? `?cursor=${cursor}` : ''}`);
      for (const row of pageOf.results as Json[]) {
        rows++;
        seen.add(row.task_id as string);
        lastEnd = Math.max(lastEnd, Date.parse(row.updated_at as string));
      }
      cursor = pageOf.next_cursor as string | null;
    } while (cursor);
    const pagingSeconds = (performance.now() - pagingStarted) / 1000;
    process.stdout.write(`paging through every result: ${rows} rows (${seen.size} distinct tasks) in ${pagingSeconds.toFixed(1)} s\n`);
    process.stdout.write(`last task's end to the run's completed state: ${((Date.parse(run.updated_at as string) - lastEnd) / 1000).toFixed(2)} s\n`);
    const worker = peakRssMiB(bench.workerPid());
    const api = peakRssMiB(bench.stack.component('api').pid);
    process.stdout.write(`peak RSS: worker ${worker?.toFixed(0) ?? '?'} MiB, API ${api?.toFixed(0) ?? '?'} MiB (goal < 1024 each)\n`);
  } finally {
    await bench.close();
    await site.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
