/**
 * `npx tsx bench/fairness.ts`: whether one account can slow the service for another.
 *
 * 1. A second account runs Fetch at a steady rate (`--rate`/s for `--seconds`) against a local page,
 *    alone, then the same while a first account (the free plan) opens MCP sessions, creates scheduled
 *    jobs and allocates and uploads CSV inputs as fast as it can, `--rounds` times in turn (so both
 *    sides see the same machine load). The abuser runs in its own process (fairness-abuser.ts), never
 *    on this process's event loop. Printed: the second account's p50/p99 beside the abuser against
 *    alone (goal: p99 ratio ≤ 1.2), the first account's answers by status, the machine's load, and the
 *    API process's RSS growth over the rounds (goal < 100 MB). `--abuser-rps` gives the abuser its own
 *    request budget, to see the steady account's latency against what an abuser may send.
 * 3. `/healthz` p99 polled while four 25 MB CSV inputs are uploaded at once (goal < 50 ms), and then
 *    while four jobs are created from them.
 *
 * `--kinds` chooses the abuse kinds, comma-separated (default: all): `holdings` (1 and 3 above),
 * `spinning-renders` (fairness-renders.ts: another tenant's Fetch and renders beside five renders of a
 * free account that never yield; `--spin-seconds`, `--spin-rounds`, `--spin-rate`, `--spin-render-concurrency`).
 *
 * Everything runs on a private stack (FerretDB, Temporal, worker, API) on loopback.
 */
import { fork } from 'node:child_process';
import http from 'node:http';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { createAccounts } from '../core/accounts';
import { openDatabase } from '../base/db';
import { SERVICE_INDEXES } from '../core/indexes';
import { createLogger } from '../base/log';
import { loadConfig as configFrom } from '../base/config';
import { processTree } from '../scripts/stack/proc';
import { startBenchStack } from './crawl';
import { spinningRenders } from './fairness-renders';

const { values: options } = parseArgs({
  options: {
    rate: { type: 'string' },
    seconds: { type: 'string' },
    rounds: { type: 'string' },
    'abuser-rps': { type: 'string' },
    'input-mb': { type: 'string' },
    kinds: { type: 'string' },
    'spin-seconds': { type: 'string' },
    'spin-rounds': { type: 'string' },
    'spin-rate': { type: 'string' },
    'spin-render-concurrency': { type: 'string' },
  },
});
const KINDS = ['holdings', 'spinning-renders'];
const kinds = new Set((options.kinds ?? KINDS.join(',')).split(',').map((kind) => kind.trim()));
for (const kind of kinds) if (!KINDS.includes(kind)) throw new Error(`--kinds: "${kind}" is not one of ${KINDS.join(', ')}`);
const loadAtStart = loadavg().map((n) => n.toFixed(2)).join(' ');
const rate = Math.min(200, Math.max(1, Number(options.rate ?? 20)));
const seconds = Math.min(120, Math.max(5, Number(options.seconds ?? 10)));
const rounds = Math.min(10, Math.max(1, Number(options.rounds ?? 3)));
/** The abuser's own request budget (requests per second, burst twice that); unset: its plan's. */
const abuserRps = options['abuser-rps'] === undefined ? undefined : Math.max(1, Number(options['abuser-rps']));
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

/** CPU seconds (user + system) a process and its children have used so far. */
function cpuSeconds(pid: number | undefined): number {
  if (!pid) return NaN;
  let ticks = 0;
  for (const member of processTree(pid)) {
    try {
      const fields = readFileSync(`/proc/${member}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // Gone meanwhile.
    }
  }
  return ticks / 100;
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
  const makeAccount = async (plan: string, budget?: number) => {
    const account = await accounts.store.createAccount({ plan, overrides: { credits: 10_000_000, concurrency: 50, ...(budget ? { requestsPerSecond: budget, requestBurst: 2 * budget } : {}) } });
    return (await accounts.store.createKey(account._id, {})).key;
  };
  const steady = await makeAccount('free');
  const abuser = await makeAccount('free', abuserRps);
  const loader = await makeAccount('free');
  const apiPid = () => bench.stack.component('api').pid;

  if (kinds.has('spinning-renders')) {
    const report = await spinningRenders({
      api: bench.api,
      keys: { other: await makeAccount('free'), abuser: await makeAccount('free') },
      seconds: Math.min(55, Math.max(5, Number(options['spin-seconds'] ?? 40))),
      rounds: Math.min(20, Math.max(1, Number(options['spin-rounds'] ?? 3))),
      rate: Math.min(200, Math.max(1, Number(options['spin-rate'] ?? 20))),
      renderConcurrency: Math.min(4, Math.max(1, Number(options['spin-render-concurrency'] ?? 1))),
    });
    for (const line of report) console.log(line);
  }
  if (!kinds.has('holdings')) {
    await db.close();
    await bench.close();
    site.close();
    return;
  }

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

  // The abuser runs in its own process: its loops must not share this process's event loop.
  const abuserProcess = fork(path.join(__dirname, 'fairness-abuser.ts'), ['--api', bench.api, '--key', abuser, '--page', page, '--loops', '2'], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const fromAbuser = <T>(test: (message: T) => boolean): Promise<T> =>
    new Promise((resolve) => {
      const listener = (message: T) => {
        if (!test(message)) return;
        abuserProcess.off('message', listener);
        resolve(message);
      };
      abuserProcess.on('message', listener);
    });
  await fromAbuser<{ ready?: boolean }>((message) => message.ready === true);

  // Warm-up, then alternating rounds: alone, beside the abuser; the same machine load for both.
  await fetch(`${bench.api}/v1/?apikey=${steady}&url=${encodeURIComponent(page)}`).then((response) => response.arrayBuffer());
  const alone: number[] = [];
  const contended: number[] = [];
  const roundRatios: string[] = [];
  let statuses: Record<string, number> = {};
  // CPU seconds of the API, FerretDB and the abuser's process, alone and beside, summed over the rounds.
  const cpu = { alone: { api: 0, db: 0, abuser: 0 }, beside: { api: 0, db: 0, abuser: 0 } };
  const cpuNow = () => ({ api: cpuSeconds(apiPid()), db: cpuSeconds(bench.stack.component('ferretdb').pid), abuser: cpuSeconds(abuserProcess.pid) });
  const addCpu = (into: typeof cpu.alone, from: ReturnType<typeof cpuNow>, to: ReturnType<typeof cpuNow>) => {
    into.api += to.api - from.api;
    into.db += to.db - from.db;
    into.abuser += to.abuser - from.abuser;
  };
  const rssBefore = rssMb(apiPid());
  for (let round = 0; round < rounds; round++) {
    const t0 = cpuNow();
    const quiet = await steadyRun();
    const t1 = cpuNow();
    abuserProcess.send({ run: true });
    const busy = await steadyRun();
    const counted = fromAbuser<{ statuses?: Record<string, number> }>((message) => message.statuses !== undefined);
    abuserProcess.send({ run: false });
    statuses = (await counted).statuses ?? {};
    addCpu(cpu.alone, t0, t1);
    addCpu(cpu.beside, t1, cpuNow());
    alone.push(...quiet);
    contended.push(...busy);
    roundRatios.push(`${(quantile(busy, 0.99) / quantile(quiet, 0.99)).toFixed(2)}x`);
  }
  const rssAfter = rssMb(apiPid());
  abuserProcess.send({ stop: true });
  await new Promise((resolve) => abuserProcess.once('exit', resolve));

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
  console.log(`Load (1/5/15 min) at the end: ${loadavg().map((n) => n.toFixed(2)).join(' ')}, ${cpus().length} cores; at the start: ${loadAtStart}`);
  console.log(`The abuser's request budget: ${abuserRps ? `${abuserRps}/s (burst ${2 * abuserRps})` : "its plan's"}`);
  console.log(`Steady Fetch at ${rate}/s, ${rounds} rounds of ${seconds} s alone then ${seconds} s beside the abuser (${alone.length} and ${contended.length} answers 200):`);
  console.log(`  alone:            p50 ${ms(p50(alone))}, p99 ${ms(p99(alone))}`);
  console.log(`  beside the abuser: p50 ${ms(p50(contended))}, p99 ${ms(p99(contended))}`);
  console.log(`  ratio:            p50 ${(p50(contended) / p50(alone)).toFixed(2)}x, p99 ${(p99(contended) / p99(alone)).toFixed(2)}x (goal ≤ 1.2x at p99); p99 ratio by round: ${roundRatios.join(', ')}`);
  console.log(`Abuser's answers (own process): ${[...Object.entries(statuses)].map(([what, n]) => `${what}: ${n}`).join(', ')}`);
  const abusive = Object.values(statuses).reduce((sum, n) => sum + n, 0);
  const phase = rounds * seconds;
  const perSecond = (value: number) => `${((100 * value) / phase).toFixed(0)}% of a core`;
  console.log(`CPU over the ${phase} s of each side: API ${perSecond(cpu.alone.api)} alone, ${perSecond(cpu.beside.api)} beside; FerretDB ${perSecond(cpu.alone.db)} alone, ${perSecond(cpu.beside.db)} beside; the abuser's own process ${perSecond(cpu.beside.abuser)}`);
  console.log(
    `Abusive requests: ${abusive} (${(abusive / phase).toFixed(0)}/s); the API's CPU per abusive request ${((1000 * (cpu.beside.api - cpu.alone.api)) / Math.max(1, abusive)).toFixed(2)} ms, FerretDB's ${((1000 * (cpu.beside.db - cpu.alone.db)) / Math.max(1, abusive)).toFixed(2)} ms`,
  );
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
