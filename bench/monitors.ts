/**
 * `npx tsx bench/monitors.ts`: monitors through the service (its own stack on free ports, checks every
 * 2 seconds allowed), against a loopback site. Prints:
 *   a. webhook arrival after the check ends: for --checks checks (default 20) that each find one page
 *      changed, the receiver's arrival of each event against the check's `ended_at` (goal p50 < 1 s);
 *   b. scheduling accuracy: a monitor on `{every: 2, unit: second}` for --schedule-s seconds (default
 *      60); each scheduled check's start against its due time, which GET /v1/monitors/{id} announced
 *      as `next_check_at` before it (goal p99 < 5 s);
 *   c. the cost of a check of --urls unchanged URLs (default 1,000) against a Batch run of the same
 *      URLs in the same run: CPU seconds of the whole stack (API, worker, FerretDB, Temporal) and
 *      credits (goal ≤ 1.1× each).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { childPids, cpuSeconds } from '../scripts/stack/proc';
import type { ComponentName, Stack } from '../scripts/stack/stack';
import { FIXTURE_TLS_CERT } from '../test/fixtures/tls-site';
import { startWebhookReceiver } from '../test/fixtures/webhook-receiver';
import { startBenchStack } from './crawl';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const { values: args } = parseArgs({ options: { checks: { type: 'string', default: '20' }, 'schedule-s': { type: 'string', default: '60' }, urls: { type: 'string', default: '1000' } } });
const CHECKS = Number(args.checks);
const SCHEDULE_S = Number(args['schedule-s']);
const URLS = Number(args.urls);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};
const secs = (value: number): string => `${(value / 1000).toFixed(3)} s`;

async function call(api: string, key: string, method: string, route: string, body?: unknown): Promise<Json> {
  const response = await fetch(`${api}${route}`, {
    method,
    headers: { 'X-API-Key': key, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  if (response.status >= 400) throw new Error(`${method} ${route}: ${response.status} ${text.slice(0, 300)}`);
  return text ? (JSON.parse(text) as Json) : {};
}

const PARTS = ['api', 'worker', 'ferretdb', 'temporal'] as const satisfies readonly ComponentName[];
/** CPU seconds each component (with its children) has used so far. */
function stackCpu(stack: Stack): Record<string, number> {
  return Object.fromEntries(
    PARTS.map((name) => {
      const pid = stack.component(name).pid;
      return [name, pid === undefined ? 0 : [pid, ...childPids(pid)].reduce((total, each) => total + cpuSeconds(each), 0)];
    }),
  );
}
const total = (cpu: Record<string, number>): number => Object.values(cpu).reduce((sum, value) => sum + value, 0);
const since = (before: Record<string, number>, after: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(after).map(([name, value]) => [name, Number((value - (before[name] ?? 0)).toFixed(2))]));

/** `/u/<n>` the same page every time; `/c/<n>` a page whose price `bump()` moves. */
async function startSite(): Promise<{ url: string; bump(): void; close(): Promise<void> }> {
  let version = 0;
  const server = http.createServer((req, res) => {
    const route = req.url ?? '/';
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    const price = route.startsWith('/c/') ? `$${100 + version}.00` : '$10.00';
    res.end(`<!doctype html><html><head><title>Item ${route}</title></head><body><h1>Item ${route}</h1><p class="price">${price}</p><p>${'A steady description of the item. '.repeat(20)}</p></body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bump: () => void version++,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function waitCheck(api: string, key: string, monitorId: string, checkId: string): Promise<Json> {
  for (;;) {
    const check = await call(api, key, 'GET', `/v1/monitors/${monitorId}/checks/${checkId}`).catch(() => ({}) as Json);
    if (check.status && check.status !== 'running') return check;
    // As often as the Batch run's state is read below.
    await sleep(200);
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fetchplane-monitors-bench-'));
  const ca = path.join(dir, 'ca.pem');
  writeFileSync(ca, FIXTURE_TLS_CERT);
  const bench = await startBenchStack({
    MONITOR_MIN_INTERVAL_SECONDS: '2',
    WEBHOOK_CA_FILE: ca,
    HOST_CONCURRENCY: '64',
    PLAN_LIMITS: `free:monitors=50:monitor_urls=${URLS + 100}`,
    MONGODB_DATABASE: 'fetchplane_monitors_bench',
    TEMPORAL_TASK_QUEUE: 'fetchplane-monitors-bench',
  });
  const site = await startSite();
  const receiver = await startWebhookReceiver();
  const { api, key } = bench;
  try {
    // a. Webhook arrival after the check ends.
    const watched = await call(api, key, 'POST', '/v1/monitors', { urls: [`${site.url}/c/1`, `${site.url}/u/1`], schedule: { every: 1, unit: 'day' }, css_extractor: { price: '.price' }, webhook: { url: receiver.url('/a') } });
    const afterEnd: number[] = [];
    for (let n = 0; n <= CHECKS; n++) {
      if (n > 0) site.bump();
      const started = await call(api, key, 'POST', `/v1/monitors/${watched.monitor_id}/check`);
      const check = await waitCheck(api, key, watched.monitor_id as string, started.check_id as string);
      const expected = n === 0 ? 1 : 2;
      const deadline = Date.now() + 30_000;
      const mine = () => receiver.deliveries.map((delivery) => ({ body: JSON.parse(delivery.body.toString('utf8')) as Json, at: delivery.at })).filter((event) => event.body.check_id === check.check_id);
      while (mine().length < expected && Date.now() < deadline) await sleep(10);
      if (n > 0) for (const event of mine()) afterEnd.push(event.at - Date.parse(check.ended_at as string));
    }
    console.log(`a. webhook arrival after the check ends (${afterEnd.length} events of ${CHECKS} checks): p50 ${secs(quantile(afterEnd, 0.5))}, p90 ${secs(quantile(afterEnd, 0.9))}, max ${secs(Math.max(...afterEnd))} (goal p50 < 1 s)`);
    await call(api, key, 'DELETE', `/v1/monitors/${watched.monitor_id}`);

    // b. Scheduling accuracy.
    const often = await call(api, key, 'POST', '/v1/monitors', { urls: [`${site.url}/u/2`], schedule: { every: 2, unit: 'second' } });
    const announced = new Set<string>();
    const until = Date.now() + SCHEDULE_S * 1000;
    while (Date.now() < until) {
      const read = await call(api, key, 'GET', `/v1/monitors/${often.monitor_id}`);
      if (read.next_check_at) announced.add(read.next_check_at as string);
      await sleep(250);
    }
    await call(api, key, 'POST', `/v1/monitors/${often.monitor_id}/pause`);
    await sleep(3_000);
    const checks = ((await call(api, key, 'GET', `/v1/monitors/${often.monitor_id}/checks?limit=100`)).checks as Json[]).filter((check) => check.trigger === 'scheduled' && check.scheduled_at);
    const late = checks.map((check) => Date.parse(check.started_at as string) - Date.parse(check.scheduled_at as string));
    const matched = checks.filter((check) => announced.has(new Date(Date.parse(check.scheduled_at as string)).toISOString())).length;
    console.log(
      `b. scheduling accuracy (${checks.length} scheduled checks in ${SCHEDULE_S} s, ${matched} of them at a next_check_at announced before): start after due p50 ${secs(quantile(late, 0.5))}, p99 ${secs(quantile(late, 0.99))}, max ${secs(Math.max(...late))} (goal p99 < 5 s); skipped ${checks.filter((check) => check.status === 'skipped').length}`,
    );
    await call(api, key, 'DELETE', `/v1/monitors/${often.monitor_id}`);

    // c. A check of URLS unchanged URLs against a Batch run of the same URLs.
    const urls = Array.from({ length: URLS }, (_, n) => `${site.url}/u/${1000 + n}`);
    const big = await call(api, key, 'POST', '/v1/monitors', { urls, schedule: { every: 1, unit: 'day' } });
    const baseline = await call(api, key, 'POST', `/v1/monitors/${big.monitor_id}/check`);
    await waitCheck(api, key, big.monitor_id as string, baseline.check_id as string);
    const usage = async (): Promise<number> => (await call(api, key, 'GET', '/v1/subscriptions/self/details')).usage as number;
    let cpu = stackCpu(bench.stack);
    let used = await usage();
    let started = Date.now();
    const unchanged = await call(api, key, 'POST', `/v1/monitors/${big.monitor_id}/check`);
    const check = await waitCheck(api, key, big.monitor_id as string, unchanged.check_id as string);
    const monitorParts = since(cpu, stackCpu(bench.stack));
    const monitorCost = { cpu: total(monitorParts), credits: (await usage()) - used, seconds: (Date.now() - started) / 1000 };
    if (check.same !== URLS) console.log(`   (the unchanged check found ${check.same} same of ${URLS}: ${JSON.stringify(check)})`);
    cpu = stackCpu(bench.stack);
    used = await usage();
    started = Date.now();
    const job = await call(api, key, 'POST', '/v1/jobs', { tasks: urls.map((url) => ({ url })) });
    let run = job.latest_run as Json;
    while (!['completed', 'failed', 'stopped'].includes(run.status as string)) {
      await sleep(200);
      run = (await call(api, key, 'GET', `/v1/jobs/${job.job_id}`)).latest_run as Json;
    }
    const batchParts = since(cpu, stackCpu(bench.stack));
    const batchCost = { cpu: total(batchParts), credits: (await usage()) - used, seconds: (Date.now() - started) / 1000 };
    console.log(
      `c. cost of ${URLS} unchanged URLs: monitor check ${monitorCost.cpu.toFixed(2)} CPU s, ${monitorCost.credits} credits, ${monitorCost.seconds.toFixed(1)} s; ` +
        `Batch run ${batchCost.cpu.toFixed(2)} CPU s, ${batchCost.credits} credits, ${batchCost.seconds.toFixed(1)} s; ` +
        `ratio CPU ${(monitorCost.cpu / batchCost.cpu).toFixed(2)}×, credits ${(monitorCost.credits / batchCost.credits).toFixed(2)}× (goal ≤ 1.1× each)`,
    );
    console.log(`   CPU s by component: monitor check ${JSON.stringify(monitorParts)}, Batch run ${JSON.stringify(batchParts)}`);
  } finally {
    await receiver.close();
    await site.close();
    await bench.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
