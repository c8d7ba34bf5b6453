/**
 * `npx tsx bench/batch.ts`: a Batch job of 100,000 URLs against a local site, through the service (its
 * own stack on free ports), against a plain undici loop over the same URLs at the same concurrency,
 * measured in the same run. Prints:
 *   - URLs per second of both, and their ratio (goal ≥ 0.5);
 *   - the worker's and the API's peak RSS (goal < 1 GB each);
 *   - the time from the last task's end to the run's `completed` state;
 *   - the time to page through every result.
 *   - the same ratio against a site that answers after --latency-ms (default 50) for --latency-urls
 *     (default 10,000): the service against a real site's pace rather than a loopback one's.
 * Options: --urls N (default 100,000), --concurrency C (default 32), --timeout-min M (default 60).
 * The job is submitted as the clients do: an open job, then calls of 10,000 tasks, the last with
 * `last_batch: true`.
 *
 * `--scale-out`: instead, the same job of --latency-urls URLs at --latency-ms, with one worker and
 * then with a second worker process on the same task queue, and the ratio of URLs/s, 2 workers / 1
 * (each worker fetches at most C at once; the plan allows 2 C, so a second worker can add its own).
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { batchRunWorkflowId } from '../core/jobs/workflow-names';
import { loadConfig } from '../base/config';
import { connectTemporal } from '../base/temporal';
import { childPids, cpuSeconds } from '../scripts/stack/proc';
import type { ComponentName, Stack } from '../scripts/stack/stack';
import { startFixtureServer } from '../test/helpers/fixtures';
import { startExtraWorker } from '../test/helpers/second-worker';
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

const PARTS = ['api', 'worker', 'ferretdb', 'temporal'] as const satisfies readonly ComponentName[];

/** CPU seconds each component of the stack (with its children) has used so far. */
function stackCpu(stack: Stack): Record<(typeof PARTS)[number], number> {
  const of = (name: ComponentName): number => {
    const pid = stack.component(name).pid;
    return pid === undefined ? 0 : [pid, ...childPids(pid)].reduce((sum, each) => sum + cpuSeconds(each), 0);
  };
  return Object.fromEntries(PARTS.map((name) => [name, of(name)])) as Record<(typeof PARTS)[number], number>;
}

interface ServiceRun {
  job: string;
  run: Json;
  seconds: number;
  submitSeconds: number;
  cpu: Record<(typeof PARTS)[number], number>;
  benchCpu: number;
}

/** A job of `urls` through the service, submitted as the clients do: an open job, calls of 10,000, the last one closing it. */
async function throughService(bench: Awaited<ReturnType<typeof startBenchStack>>, urls: string[], timeoutMs: number): Promise<ServiceRun> {
  const cpuBefore = stackCpu(bench.stack);
  const benchCpuBefore = process.cpuUsage();
  const started = performance.now();
  const created = await call(bench.api, bench.key, 'POST', '/v1/jobs', { type: 'regular', status: 'open', tasks: [] });
  const job = created.job_id as string;
  for (let from = 0; from < urls.length; from += 10_000) {
    const tasks = urls.slice(from, from + 10_000).map((url) => ({ url }));
    await call(bench.api, bench.key, 'POST', `/v1/jobs/${job}/tasks`, { tasks, ...(from + 10_000 >= urls.length ? { last_batch: true } : {}) });
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
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = stackCpu(bench.stack);
  const benchCpu = process.cpuUsage(benchCpuBefore);
  const cpu = Object.fromEntries(PARTS.map((name) => [name, cpuAfter[name] - cpuBefore[name]])) as ServiceRun['cpu'];
  return { job, run, seconds, submitSeconds: (submitted - started) / 1000, cpu, benchCpu: (benchCpu.user + benchCpu.system) / 1e6 };
}

const PAGE = `<html><head><title>t</title></head><body>${'<p>lorem ipsum dolor sit amet</p>'.repeat(30)}</body></html>`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      urls: { type: 'string' },
      concurrency: { type: 'string' },
      'timeout-min': { type: 'string' },
      'latency-ms': { type: 'string' },
      'latency-urls': { type: 'string' },
      'scale-out': { type: 'boolean' },
    },
  });
  const count = Math.min(100_000, Math.max(100, Number(values.urls ?? 100_000) || 100_000));
  const concurrency = Math.min(256, Math.max(1, Number(values.concurrency ?? 32) || 32));
  const timeoutMs = Math.min(240, Math.max(1, Number(values['timeout-min'] ?? 60) || 60)) * 60_000;
  const latencyMs = Math.min(2_000, Math.max(0, Number(values['latency-ms'] ?? 50) || 0));
  const latencyCount = Math.min(100_000, Math.max(0, Number(values['latency-urls'] ?? 10_000) || 0));
  const site = await startFixtureServer((req, res) => {
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    // Paths under /slow/ answer after the latency a real site's round trip and server time would add.
    if (req.url?.startsWith('/slow/')) setTimeout(() => res.end(PAGE), latencyMs);
    else res.end(PAGE);
  });
  if (values['scale-out']) {
    await scaleOut(site, concurrency, latencyMs, Math.max(100, latencyCount), timeoutMs);
    await site.close();
    return;
  }
  const bench = await startBenchStack({ BATCH_CONCURRENCY: String(concurrency), FREE_PLAN_CONCURRENCY: String(concurrency) });
  try {
    const urls = Array.from({ length: count }, (_, index) => `${site.url}p/${index}`);
    const plainSeconds = await plainLoop(urls, concurrency);
    process.stdout.write(`plain undici loop: ${count} URLs in ${plainSeconds.toFixed(1)} s (${(count / plainSeconds).toFixed(0)} URLs/s) at concurrency ${concurrency}\n`);
    const service = await throughService(bench, urls, timeoutMs);
    const { run } = service;
    process.stdout.write(
      `service: ${run.stats.completed} of ${count} URLs ${run.status} in ${service.seconds.toFixed(1)} s (${(count / service.seconds).toFixed(0)} URLs/s), ` +
        `submission ${service.submitSeconds.toFixed(1)} s of it\n`,
    );
    process.stdout.write(`ratio of URLs/s, service / plain loop: ${(plainSeconds / service.seconds).toFixed(2)} (goal ≥ 0.5)\n`);
    // Where the machine's time went during the run: CPU per URL of each part (the bench process is the target site).
    const perUrl = (seconds: number): string => `${((seconds * 1e6) / count).toFixed(0)} µs`;
    const parts = PARTS.map((name) => `${name} ${perUrl(service.cpu[name])}`);
    parts.push(`target site and client ${perUrl(service.benchCpu)}`);
    process.stdout.write(`CPU per URL during the run: ${parts.join(', ')}\n`);

    const pagingStarted = performance.now();
    let rows = 0;
    let lastEnd = 0;
    const seen = new Set<string>();
    let cursor: string | null = null;
    do {
      const pageOf: Json = await call(bench.api, bench.key, 'GET', `/v1/jobs/${service.job}/results${cursor ? `?cursor=${cursor}` : ''}`);
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

    if (latencyCount > 0 && latencyMs > 0) {
      // The same comparison against a site that takes latencyMs to answer, as sites on the internet do:
      // both sides then wait on the site, and what the service adds shows as the share it loses.
      const slow = Array.from({ length: latencyCount }, (_, index) => `${site.url}slow/${index}`);
      const plainSlow = await plainLoop(slow, concurrency);
      const serviceSlow = await throughService(bench, slow, timeoutMs);
      process.stdout.write(
        `with ${latencyMs} ms of site latency, ${latencyCount} URLs: plain loop ${(latencyCount / plainSlow).toFixed(0)} URLs/s, ` +
          `service ${(latencyCount / serviceSlow.seconds).toFixed(0)} URLs/s, ratio ${(plainSlow / serviceSlow.seconds).toFixed(2)}\n`,
      );
    }
    const worker = peakRssMiB(bench.workerPid());
    const api = peakRssMiB(bench.stack.component('api').pid);
    process.stdout.write(`peak RSS: worker ${worker?.toFixed(0) ?? '?'} MiB, API ${api?.toFixed(0) ?? '?'} MiB (goal < 1024 each)\n`);
  } finally {
    await bench.close();
    await site.close();
  }
}

/** How many slices of a run each worker started, from the run's history. */
async function slicesPerWorker(stack: Stack, runId: string): Promise<Record<string, number>> {
  const temporal = connectTemporal(loadConfig(stack.component('api').spec.env));
  try {
    const history = await temporal.client.workflow.getHandle(batchRunWorkflowId(runId)).fetchHistory();
    const slices = new Set<string>();
    const counts: Record<string, number> = {};
    for (const event of history.events ?? []) {
      if (event.activityTaskScheduledEventAttributes?.activityType?.name === 'batchSlice') slices.add(String(event.eventId));
      const started = event.activityTaskStartedEventAttributes;
      if (started && slices.has(String(started.scheduledEventId))) counts[started.identity ?? '?'] = (counts[started.identity ?? '?'] ?? 0) + 1;
    }
    return counts;
  } finally {
    await temporal.close();
  }
}

/** One run with one worker, one with two: the URLs/s ratio says whether a second worker takes its share. */
async function scaleOut(site: { url: string }, concurrency: number, latencyMs: number, count: number, timeoutMs: number): Promise<void> {
  // Each worker holds to BATCH_CONCURRENCY; the plan allows twice that, so it is the workers that bound the run.
  const bench = await startBenchStack({ BATCH_CONCURRENCY: String(concurrency), FREE_PLAN_CONCURRENCY: String(2 * concurrency) });
  try {
    const urls = (round: number): string[] => Array.from({ length: count }, (_, index) => `${site.url}slow/${round}-${index}`);
    const report = async (label: string, run: ServiceRun, extraCpu: number): Promise<void> => {
      const cpu = (run.cpu.worker + extraCpu) / run.seconds;
      process.stdout.write(
        `${label}: ${run.run.stats.completed} of ${count} URLs ${run.run.status} in ${run.seconds.toFixed(1)} s (${(count / run.seconds).toFixed(0)} URLs/s); ` +
          `workers busy ${cpu.toFixed(2)} cores, whole stack ${((Object.values(run.cpu).reduce((sum, each) => sum + each, 0) + extraCpu + run.benchCpu) / run.seconds).toFixed(2)} of ${os.cpus().length}; ` +
          `slices per worker ${JSON.stringify(await slicesPerWorker(bench.stack, run.run.run_id as string))}\n`,
      );
    };
    const one = await throughService(bench, urls(1), timeoutMs);
    await report('1 worker', one, 0);
    const extra = await startExtraWorker(bench.stack, 'worker-bench-second');
    try {
      const extraBefore = cpuSeconds(extra.pid);
      const two = await throughService(bench, urls(2), timeoutMs);
      await report('2 workers', two, cpuSeconds(extra.pid) - extraBefore);
      process.stdout.write(`ratio of URLs/s, 2 workers / 1 worker, ${latencyMs} ms of site latency, ${concurrency} per worker: ${(one.seconds / two.seconds).toFixed(2)} (ideal 2)\n`);
    } finally {
      await extra.stop();
    }
  } finally {
    await bench.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
