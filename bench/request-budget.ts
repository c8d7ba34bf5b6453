/**
 * `npx tsx bench/request-budget.ts`: what the stack serves, and the default request budget derived
 * from it (README "Request budget").
 *
 * 1. Capacity: on a private stack (FerretDB, Temporal, worker, one API process), each kind of request
 *    is sent as fast as `--concurrency` connections allow for `--seconds`, from an account with no
 *    budget: job listings (`GET /v1/jobs`, the account holding 20 jobs), Fetch of a local page, and
 *    look-ups of keys no cache knows (well-formed random keys: one database read each). Printed: the
 *    rate, p50, and the CPU the API process and FerretDB used per second.
 * 2. Derivation: the default `requests_per_second` is a quarter of the listing rate (the dearest
 *    request the budget admits in bulk), so one account flooding within its budget keeps the store
 *    at most a quarter busy (queueing then adds at most a third to another tenant's wait);
 *    `request_burst` is two seconds of it, `requests_in_flight` the flood's in-flight at that rate
 *    (rate × its p50 at capacity, at least 8).
 * 3. Check: another tenant's Fetch p50 and p99 at a steady `--rate`, alone and beside an account
 *    flooding job listings with `--concurrency` connections under the derived budget, in alternating
 *    rounds (goal: p50 ≤ 1.5×).
 *
 *   npx tsx bench/request-budget.ts [--seconds 6] [--concurrency 32] [--rate 20] [--rounds 2]
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { createAccounts } from '../core/accounts';
import { loadConfig, processConfig } from '../base/config';
import { openDatabase } from '../base/db';
import { SERVICE_INDEXES } from '../core/indexes';
import { createLogger } from '../base/log';
import { childPids, cpuSeconds } from '../scripts/stack/proc';
import { Stack, type ComponentName } from '../scripts/stack/stack';

const { values: options } = parseArgs({ options: { seconds: { type: 'string' }, concurrency: { type: 'string' }, rate: { type: 'string' }, rounds: { type: 'string' } } });
const SECONDS = Math.min(60, Math.max(2, Number(options.seconds ?? 6)));
const CONCURRENCY = Math.min(256, Math.max(1, Number(options.concurrency ?? 32)));
const RATE = Math.min(200, Math.max(1, Number(options.rate ?? 20)));
const ROUNDS = Math.min(10, Math.max(1, Number(options.rounds ?? 2)));
const UNLIMITED = { credits: 100_000_000, concurrency: 1_000, requestsPerSecond: 1_000_000, requestBurst: 1_000_000, requestsInFlight: 1_000_000 };

interface Sample {
  latencies: number[];
  statuses: Map<number, number>;
  seconds: number;
}

const quantile = (values: number[], q: number): number => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))] ?? NaN;

async function send(dispatcher: Agent, url: string, headers: Record<string, string>, sample: Sample): Promise<void> {
  const began = performance.now();
  const response = await request(url, { dispatcher, headers });
  await response.body.dump();
  sample.latencies.push(performance.now() - began);
  sample.statuses.set(response.statusCode, (sample.statuses.get(response.statusCode) ?? 0) + 1);
}

/** As fast as `connections` allow, for `seconds`. */
async function closedLoop(dispatcher: Agent, target: () => { url: string; headers: Record<string, string> }, connections: number, seconds: number, stop?: () => boolean): Promise<Sample> {
  const sample: Sample = { latencies: [], statuses: new Map(), seconds };
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline && !stop?.()) {
        const { url, headers } = target();
        await send(dispatcher, url, headers, sample);
      }
    }),
  );
  sample.seconds = (performance.now() - started) / 1000;
  return sample;
}

/** `rate` requests a second for `seconds`, each on time whatever the others do. */
async function openLoop(dispatcher: Agent, url: string, rate: number, seconds: number): Promise<Sample> {
  const sample: Sample = { latencies: [], statuses: new Map(), seconds };
  const sent: Array<Promise<void>> = [];
  const started = performance.now();
  for (let n = 0; n < rate * seconds; n++) {
    const at = started + (n * 1000) / rate;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, at - performance.now())));
    sent.push(send(dispatcher, url, {}, sample));
  }
  await Promise.all(sent);
  return sample;
}

const statuses = (sample: Sample): string => [...sample.statuses].sort(([a], [b]) => a - b).map(([status, n]) => `${status}×${n}`).join(' ');

async function main(): Promise<void> {
  const page = `<!doctype html><html><head><title>bench</title></head><body>${'<p>Lorem ipsum dolor sit amet.</p>'.repeat(100)}</body></html>`;
  const target = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page);
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  const targetUrl = `http://127.0.0.1:${(target.address() as { port: number }).port}/`;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'fetchplane-budget-bench-'));
  const stack = new Stack({
    config: { ...processConfig(), dataDir },
    ports: { api: 0, ferretdb: 0, temporal: 0, temporalUi: 0 },
    serviceEnv: { LOG_LEVEL: 'warn', TARGET_ALLOWLIST: '127.0.0.1', AUTH_FAILURE_BURST: '1000000', AUTH_FAILURES_PER_MINUTE: '1000000', ACTIVE_JOBS_LIMIT: '100' },
  });
  const dispatcher = new Agent({ connections: CONCURRENCY * 2, keepAliveTimeout: 30_000 });
  try {
    await stack.start();
    const config = loadConfig(stack.component('api').spec.env);
    const log = createLogger('error');
    const db = await openDatabase(config, log, { indexes: SERVICE_INDEXES });
    const accounts = createAccounts({ db: db.db, config, log });
    const keyOf = async (overrides: Record<string, number>): Promise<string> => (await accounts.store.createKey((await accounts.store.createAccount({ plan: 'free', overrides }))._id, {})).key;
    const lister = await keyOf(UNLIMITED);
    const tenant = await keyOf(UNLIMITED);
    const api = stack.urls.api;
    for (let n = 0; n < 20; n++) {
      const made = await request(`${api}/v1/jobs`, { method: 'POST', dispatcher, headers: { 'x-api-key': lister, 'content-type': 'application/json' }, body: JSON.stringify({ tasks: [{ url: `${targetUrl}?n=${n}` }] }) });
      await made.body.dump();
      if (made.statusCode !== 201) throw new Error(`job ${n}: ${made.statusCode}`);
    }
    const pidsOf = (name: ComponentName): number[] => {
      const pid = stack.component(name).pid;
      return pid === undefined ? [] : [pid, ...childPids(pid)];
    };
    const cpu = (name: ComponentName): number => pidsOf(name).reduce((sum, pid) => sum + cpuSeconds(pid), 0);

    const kinds = {
      'job listings': () => ({ url: `${api}/v1/jobs`, headers: { 'x-api-key': lister } }),
      fetch: () => ({ url: `${api}/v1/?apikey=${tenant}&url=${encodeURIComponent(targetUrl)}`, headers: {} }),
      'unknown keys': () => ({ url: `${api}/v1/jobs`, headers: { 'x-api-key': randomBytes(20).toString('hex') } }),
    };
    for (const make of Object.values(kinds)) await closedLoop(dispatcher, make, CONCURRENCY, 1);
    console.log(`capacity: each kind as fast as ${CONCURRENCY} connections allow, ${SECONDS} s, one API process (${os.cpus().length} cores, load ${os.loadavg()[0]?.toFixed(2)})`);
    const capacity: Record<string, { rate: number; p50: number }> = {};
    for (const [name, make] of Object.entries(kinds)) {
      const before = { api: cpu('api'), ferretdb: cpu('ferretdb') };
      const sample = await closedLoop(dispatcher, make, CONCURRENCY, SECONDS);
      const rate = sample.latencies.length / sample.seconds;
      capacity[name] = { rate, p50: quantile(sample.latencies, 0.5) };
      const busy = (part: 'api' | 'ferretdb'): string => `${((cpu(part) - before[part]) / sample.seconds).toFixed(2)}`;
      console.log(`  ${name.padEnd(13)} ${rate.toFixed(0).padStart(6)} req/s  p50 ${quantile(sample.latencies, 0.5).toFixed(1).padStart(6)} ms  p99 ${quantile(sample.latencies, 0.99).toFixed(1).padStart(7)} ms  CPU/s api ${busy('api')} ferretdb ${busy('ferretdb')}  ${statuses(sample)}`);
    }
    const listings = capacity['job listings'] as { rate: number; p50: number };
    const rps = Math.max(1, Math.floor(listings.rate / 4));
    const budget = { requestsPerSecond: rps, requestBurst: 2 * rps, requestsInFlight: Math.max(8, Math.ceil((rps * listings.p50) / 1000)) };
    console.log(`derived: requests_per_second = ${listings.rate.toFixed(0)} / 4 = ${rps}, request_burst = ${budget.requestBurst}, requests_in_flight = max(8, ${rps} × ${listings.p50.toFixed(1)} ms) = ${budget.requestsInFlight}`);

    const flooder = await keyOf({ credits: 100_000_000, ...budget });
    const fetchUrl = `${api}/v1/?apikey=${tenant}&url=${encodeURIComponent(targetUrl)}`;
    const alone: number[] = [];
    const beside: number[] = [];
    const flood: Sample = { latencies: [], statuses: new Map(), seconds: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      alone.push(...(await openLoop(dispatcher, fetchUrl, RATE, SECONDS)).latencies);
      let stop = false;
      const flooding = closedLoop(dispatcher, () => ({ url: `${api}/v1/jobs`, headers: { 'x-api-key': flooder } }), CONCURRENCY, SECONDS + 5, () => stop);
      await new Promise((resolve) => setTimeout(resolve, 500));
      beside.push(...(await openLoop(dispatcher, fetchUrl, RATE, SECONDS)).latencies);
      stop = true;
      const flooded = await flooding;
      flood.latencies.push(...flooded.latencies);
      flood.seconds += flooded.seconds;
      for (const [status, n] of flooded.statuses) flood.statuses.set(status, (flood.statuses.get(status) ?? 0) + n);
    }
    const admitted = (flood.statuses.get(200) ?? 0) / flood.seconds;
    console.log(`check: another tenant's Fetch at ${RATE}/s, ${ROUNDS} rounds of ${SECONDS} s, alone and beside ${CONCURRENCY} connections of job listings under the derived budget`);
    console.log(`  flood: ${admitted.toFixed(0)} listings/s admitted; ${statuses(flood)}`);
    console.log(`  tenant alone:  p50 ${quantile(alone, 0.5).toFixed(1)} ms  p99 ${quantile(alone, 0.99).toFixed(1)} ms`);
    console.log(`  tenant beside: p50 ${quantile(beside, 0.5).toFixed(1)} ms  p99 ${quantile(beside, 0.99).toFixed(1)} ms`);
    console.log(`  ratio p50 ${(quantile(beside, 0.5) / quantile(alone, 0.5)).toFixed(2)} (goal ≤ 1.5), p99 ${(quantile(beside, 0.99) / quantile(alone, 0.99)).toFixed(2)}`);
    await accounts.slots.abandon();
    await db.close();
  } finally {
    await dispatcher.close();
    await stack.stop();
    target.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
