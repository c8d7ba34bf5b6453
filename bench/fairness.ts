/**
 * `npx tsx bench/fairness.ts`: whether one account can slow the service for another.
 *
 * 1. A second account runs Fetch at a steady rate (`--rate`/s for `--seconds`) against a local page,
 *    alone: its p50/p99 latency is the baseline.
 * 2. The same again while a first account (the free plan) opens MCP sessions, creates scheduled jobs
 *    and allocates and uploads CSV inputs as fast as it can: the second account's p50/p99 against the
 *    baseline (goal: p99 ratio ≤ 1.2), the first account's answers by status, and the API process's
 *    RSS growth over the phase (goal < 100 MB).
 * 3. `/healthz` p99 polled while four 25 MB CSV inputs are uploaded at once (goal < 50 ms), and then
 *    while four jobs are created from them.
 *
 * Everything runs on a private stack (FerretDB, Temporal, worker, API) on loopback.
 */
import http from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { createAccounts } from '../core/accounts';
import { openDatabase } from '../core/db';
import { SERVICE_INDEXES } from '../core/indexes';
import { createLogger } from '../core/log';
import { loadConfig as configFrom } from '../core/config';
import { processTree } from '../scripts/stack/proc';
import { startBenchStack } from './crawl';

const { values: options } = parseArgs({ options: { rate: { type: 'string' }, seconds: { type: 'string' }, 'input-mb': { type: 'string' } } });
const rate = Math.min(200, Math.max(1, Number(options.rate ?? 20)));
const seconds = Math.min(120, Math.max(5, Number(options.seconds ?? 20)));
const inputBytes = Math.min(60, Math.max(1, Number(options['input-mb'] ?? 25))) * 1024 * 1024;

const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
};
const ms = (value: number): string => `${value.toFixed(1)} ms`;

/** Resident memory of a process and its children, in MB. */
function rssMb(pid: number | undefined): number {
  if (!pid) return NaN;
  let total = 0;
  for (const member of processTree(pid)) {
    try {
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${member}/status`, 'utf8'));
      total += match ? Number(match[1]) / 1024 : 0;
    } catch {
      // Gone meanwhile.
    }
  }
  return total;
}

async function main(): Promise<void> {
  const site = http.createServer((_req, res) => {
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end('<html><head><title>Steady</title></head><body><h1>A steady page</h1><p>Some text.</p></body></html>');
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const page = `http://127.0.0.1:${(site.address() as AddressInfo).port}/steady`;
  const bench = await startBenchStack({ MONGODB_DATABASE: 'fetchplane_fairness_bench', TEMPORAL_TASK_QUEUE: 'fetchplane-fairness-bench', BATCH_SCHEDULE_MIN_INTERVAL_SECONDS: '60' });
  const config = configFrom(bench.stack.component('api').spec.env);
  const db = await openDatabase(config, createLogger('error'), { indexes: SERVICE_INDEXES });
  const accounts = createAccounts({ db: db.db, config, log: createLogger('error') });
  const makeAccount = async (plan: string) => {
    const account = await accounts.store.createAccount({ plan, overrides: { credits: 10_000_000, concurrency: 50 } });
    return (await accounts.store.createKey(account._id, {})).key;
  };
  const steady = await makeAccount('free');
  const abuser = await makeAccount('free');
  const loader = await makeAccount('free');
  const apiPid = () => bench.stack.component('api').pid;

  /** The steady account's Fetch latencies over `seconds` at `rate` per second. */
  const steadyRun = async (): Promise<number[]> => {
    const latencies: number[] = [];
    const pending: Array<Promise<void>> = [];
    const started = performance.now();
    for (let n = 0; n < rate * seconds; n++) {
      const due = started + (n * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      pending.push(
        (async () => {
          const t0 = performance.now();
          const response = await fetch(`${bench.api}/v1/?apikey=${steady}&url=${encodeURIComponent(page)}`);
          await response.arrayBuffer();
          if (response.status === 200) latencies.push(performance.now() - t0);
        })(),
      );
    }
    await Promise.all(pending);
    return latencies;
  };

  // Warm-up, then the baseline.
  await fetch(`${bench.api}/v1/?apikey=${steady}&url=${encodeURIComponent(page)}`).then((response) => response.arrayBuffer());
  const alone = await steadyRun();

  // The abuser, as fast as it can, while the steady account runs again.
  const statuses = new Map<string, number>();
  const count = (what: string, status: number) => statuses.set(`${what} ${status}`, (statuses.get(`${what} ${status}`) ?? 0) + 1);
  let stop = false;
  const json = { 'X-API-Key': abuser, 'Content-Type': 'application/json' };
  const loops = [
    async () => {
      while (!stop) {
        const response = await fetch(`${bench.api}/mcp`, {
          method: 'POST',
          headers: { authorization: `Bearer ${abuser}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'abuser', version: '1' } } }),
        });
        await response.arrayBuffer();
        count('mcp session', response.status);
      }
    },
    async () => {
      while (!stop) {
        const response = await fetch(`${bench.api}/v1/jobs`, { method: 'POST', headers: json, body: JSON.stringify({ type: 'scheduled', schedule: { rate: { every: 1, unit: 'minute' } }, tasks: [{ url: page }] }) });
        await response.arrayBuffer();
        count('scheduled job', response.status);
      }
    },
    async () => {
      while (!stop) {
        const created = await fetch(`${bench.api}/v1/job_inputs`, { method: 'POST', headers: json, body: JSON.stringify({ type: 'csv', csv: { fields: { url: 0 } } }) });
        const body = (await created.json()) as { upload?: { url: string } };
        count('input', created.status);
        if (body.upload) {
          const uploaded = await fetch(body.upload.url, { method: 'PUT', headers: { 'content-type': 'text/csv' }, body: `${page}\n`.repeat(1000) });
          await uploaded.arrayBuffer();
          count('upload', uploaded.status);
        }
      }
    },
  ];
  const rssBefore = rssMb(apiPid());
  const abusing = Promise.all([...loops, ...loops].map((loop) => loop()));
  const contended = await steadyRun();
  stop = true;
  await abusing;
  const rssAfter = rssMb(apiPid());

  // /healthz while four large inputs are uploaded, then while four jobs are made from them.
  // At most the 100,000 rows a job holds, padded to the input's size.
  const rows = Math.min(100_000, Math.floor(inputBytes / 120));
  const pad = 'x'.repeat(Math.max(0, Math.floor(inputBytes / rows) - `${page}?n=99999&pad=,id-99999\n`.length));
  const row = (n: number) => `${page}?n=${n}&pad=${pad},id-${n}\n`;
  const csv = Buffer.from(Array.from({ length: rows }, (_, n) => row(n)).join(''));
  const poll = (until: Promise<unknown>): Promise<number[]> =>
    (async () => {
      const latencies: number[] = [];
      let done = false;
      void until.finally(() => (done = true));
      while (!done) {
        const t0 = performance.now();
        await (await fetch(`${bench.api}/healthz`)).arrayBuffer();
        latencies.push(performance.now() - t0);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return latencies;
    })();
  // The same polling with nothing else running, for scale on this machine.
  const idle = await poll(new Promise((resolve) => setTimeout(resolve, 5_000)));
  const inputs = await Promise.all(
    [0, 1, 2, 3].map(async () => {
      const created = await fetch(`${bench.api}/v1/job_inputs`, { method: 'POST', headers: { 'X-API-Key': loader, 'Content-Type': 'application/json' }, body: JSON.stringify({ type: 'csv', csv: { fields: { url: 0, external_id: 1 } } }) });
      return (await created.json()) as { file_input_id: string; upload: { url: string } };
    }),
  );
  const uploads = Promise.all(inputs.map((input) => fetch(input.upload.url, { method: 'PUT', headers: { 'content-type': 'text/csv' }, body: csv }).then(async (response) => [response.status, await response.text()] as const)));
  const duringUploads = await poll(uploads);
  const uploaded = await uploads;
  const jobs = Promise.all(
    inputs.map((input) =>
      fetch(`${bench.api}/v1/jobs`, { method: 'POST', headers: { 'X-API-Key': loader, 'Content-Type': 'application/json' }, body: JSON.stringify({ file_input_id: input.file_input_id, status: 'closed' }) }).then(async (response) => {
        const body = (await response.json()) as { job_id?: string; accepted_tasks?: number };
        if (body.job_id) await fetch(`${bench.api}/v1/jobs/${body.job_id}/stop`, { method: 'POST', headers: { 'X-API-Key': loader } }).catch(() => undefined);
        return [response.status, body.accepted_tasks] as const;
      }),
    ),
  );
  const duringJobs = await poll(jobs);
  const made = await jobs;

  const p50 = (values: number[]) => quantile(values, 0.5);
  const p99 = (values: number[]) => quantile(values, 0.99);
  console.log(`Steady Fetch at ${rate}/s for ${seconds} s (${alone.length} and ${contended.length} answers 200):`);
  console.log(`  alone:            p50 ${ms(p50(alone))}, p99 ${ms(p99(alone))}`);
  console.log(`  beside the abuser: p50 ${ms(p50(contended))}, p99 ${ms(p99(contended))}`);
  console.log(`  ratio:            p50 ${(p50(contended) / p50(alone)).toFixed(2)}x, p99 ${(p99(contended) / p99(alone)).toFixed(2)}x (goal ≤ 1.2x at p99)`);
  console.log(`Abuser's answers: ${[...statuses.entries()].map(([what, n]) => `${what}: ${n}`).join(', ')}`);
  console.log(`API RSS: ${rssBefore.toFixed(0)} MB before, ${rssAfter.toFixed(0)} MB after (growth ${(rssAfter - rssBefore).toFixed(0)} MB, goal < 100 MB)`);
  console.log(`Four ${(csv.length / 1024 / 1024).toFixed(1)} MB CSV inputs (${rows} rows each): uploads answered ${uploaded.map(([status]) => status).join(', ')}`);
  console.log(`  /healthz idle (5 s, same polling): p50 ${ms(p50(idle))}, p99 ${ms(p99(idle))}, max ${ms(Math.max(...idle))} over ${idle.length} polls`);
  console.log(`  /healthz during the uploads: p50 ${ms(p50(duringUploads))}, p99 ${ms(p99(duringUploads))}, max ${ms(Math.max(...duringUploads))} over ${duringUploads.length} polls (goal p99 < 50 ms)`);
  console.log(`  jobs from them answered ${made.map(([status, tasks]) => `${status} (${tasks ?? '-'} tasks)`).join(', ')}`);
  console.log(`  /healthz during the job creations: p50 ${ms(p50(duringJobs))}, p99 ${ms(p99(duringJobs))}, max ${ms(Math.max(...duringJobs))} over ${duringJobs.length} polls`);
  await db.close();
  await bench.close();
  site.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
