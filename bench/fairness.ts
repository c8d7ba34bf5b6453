/**
 * `npx tsx bench/fairness.ts`: whether one account can slow the service for another.
 *
 * 1. A steady tenant runs Fetch at `--rate`/s against a local page, alone, then beside an abusive
 *    account doing one kind of abuse, in alternating rounds (`--rounds` of `--seconds` each side, after
 *    one warm-up round that is not counted), so both sides see the same machine. Per kind: the steady
 *    tenant's p50 and p99 beside the abuse against alone (goals ≤ 1.5× and ≤ 3×, p99 over at least
 *    5,000 answers a side), the abuser's answers by status and the most requests it started within
 *    any 50 ms per round past its first 2 s (its bursts), and the CPU each side cost. The kinds
 *    (`--kinds`, comma-separated; bench/fairness-abuser.ts says what each sends):
 *      creations  MCP sessions, scheduled jobs and CSV inputs as fast as the account may make them
 *      flood      job listings within the account's request budget, as fast as it lets them
 *      keys       requests with random well-formed keys
 *      pages      a 9.8 MB page nested 900,000 deep, as main content, Markdown and css_extractor
 *      paused     nine Batch jobs of three free accounts at a host that answers 429 for ten minutes;
 *                 here the tenant also runs a 60-task Batch job at a healthy host each round, timed
 *      spinning-renders  five renders of a free account whose page's script never yields, beside the
 *                 tenant's plain and rendered Fetch (fairness-renders.ts; `--spin-seconds`,
 *                 `--spin-rounds`, `--spin-rate`, `--spin-render-concurrency`)
 * 2. With `--inputs`: `/healthz` p99 polled while four 25 MB CSV inputs are uploaded at once (goal
 *    < 50 ms), and then while four jobs are made from them.
 *
 * The abuser runs in its own process (fairness-abuser.ts), never on this process's event loop.
 * Everything runs on a private stack (FerretDB, Temporal, worker, API) on loopback.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { readFileSync } from 'node:fs';
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
    kinds: { type: 'string' },
    'abuser-rps': { type: 'string' },
    inputs: { type: 'boolean' },
    'input-mb': { type: 'string' },
    'spin-seconds': { type: 'string' },
    'spin-rounds': { type: 'string' },
    'spin-rate': { type: 'string' },
    'spin-render-concurrency': { type: 'string' },
  },
});
const loadAtStart = loadavg().map((n) => n.toFixed(2)).join(' ');
const rate = Math.min(200, Math.max(1, Number(options.rate ?? 50)));
const seconds = Math.min(120, Math.max(5, Number(options.seconds ?? 20)));
const rounds = Math.min(20, Math.max(1, Number(options.rounds ?? 5)));
const KINDS = ['creations', 'flood', 'keys', 'pages', 'paused', 'spinning-renders'];
const kinds = (options.kinds ?? KINDS.join(',')).split(',').map((kind) => kind.trim()).filter(Boolean);
for (const kind of kinds) if (!KINDS.includes(kind)) throw new Error(`--kinds: "${kind}" is not one of ${KINDS.join(', ')}`);
/** The abuser's own request budget (requests per second, burst twice that); unset: its plan's. */
const abuserRps = options['abuser-rps'] === undefined ? undefined : Math.max(1, Number(options['abuser-rps']));
const inputBytes = Math.min(60, Math.max(1, Number(options['input-mb'] ?? 25))) * 1024 * 1024;

const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
};
const ms = (value: number): string => `${value.toFixed(1)} ms`;

/** Resident memory of a process, with its children (the API's: the browser it renders with) unless `own`, in MB. */
function rssMb(pid: number | undefined, own = false): number {
  if (!pid) return NaN;
  let total = 0;
  for (const member of own ? [pid] : processTree(pid)) {
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

/** The steady tenant's numbers beside one kind of abuse. */
interface KindReport {
  kind: string;
  alone: number[];
  beside: number[];
  roundRatios: string[];
  statuses: Record<string, number>;
  /** Per phase beside, the most requests the abuser started within any 50 ms. */
  bursts: number[];
  cpu: { alone: { api: number; db: number; worker: number; abuser: number; site: number }; beside: { api: number; db: number; worker: number; abuser: number; site: number } };
  /** `paused`: the tenant's Batch job of 60 tasks at a healthy host, seconds per round. */
  batch?: { alone: number[]; beside: number[] };
  /** API resident memory (MB) after the warm-up round's alone phase, and after the kind's last round. */
  rss?: { warm: number; end: number; rounds: number[] };
}

/** The local site (fairness-site.ts) in a child process: a steady page, the hostile nested page, and a host that answers 429 for ten minutes. */
async function startSite(): Promise<{ url: string; pid: number | undefined; close(): void }> {
  const child: ChildProcess = fork(path.join(__dirname, 'fairness-site.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (message: { url?: string }) => (message.url ? resolve(message.url) : reject(new Error('the site sent no URL'))));
    child.once('exit', (code) => reject(new Error(`the site exited with ${code}`)));
  });
  return { url, pid: child.pid, close: () => child.send({ stop: true }) };
}

async function main(): Promise<void> {
  const site = await startSite();
  // The /limited host is a host of its own (another name, same port): its pause is not the steady page's.
  const limitedSite = site.url.replace('127.0.0.1', 'limited.fixture.test');
  const bench = await startBenchStack({ MONGODB_DATABASE: 'fetchplane_fairness_bench', TEMPORAL_TASK_QUEUE: 'fetchplane-fairness-bench', BATCH_SCHEDULE_MIN_INTERVAL_SECONDS: '60' });
  const config = configFrom(bench.stack.component('api').spec.env);
  const db = await openDatabase(config, createLogger('error'), { indexes: SERVICE_INDEXES });
  const accounts = createAccounts({ db: db.db, config, log: createLogger('error') });
  const makeAccount = async (plan: string, budget?: number) => {
    const account = await accounts.store.createAccount({ plan, overrides: { credits: 10_000_000, ...(budget ? { requestsPerSecond: budget, requestBurst: 2 * budget } : {}) } });
    return (await accounts.store.createKey(account._id, {})).key;
  };
  // The tenant measured pays for a budget above its rate (a free account's 20/s would refuse it); the abusers are free.
  const steady = await makeAccount('business');
  const loader = await makeAccount('business');
  const pid = (name: 'api' | 'ferretdb' | 'worker') => bench.stack.component(name).pid;
  const page = `${site.url}/steady`;

  /** The steady tenant's answers other than 200, by status and code (a tenant refused is not measured, so it is counted). */
  const refusals = new Map<string, number>();
  /** The steady tenant's Fetch latencies over `seconds` at `rate` per second. */
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
          const response = await fetch(`${bench.api}/v1/?apikey=${steady}&url=${encodeURIComponent(`${page}?n=${n}`)}`).catch(() => undefined);
          const text = (await response?.text().catch(() => '')) ?? '';
          if (response?.status === 200) latencies.push(performance.now() - t0);
          else {
            const code = response ? ((JSON.parse(text || '{}') as { code?: string }).code ?? '') : 'unanswered';
            const label = `${response?.status ?? 0} ${code}`;
            refusals.set(label, (refusals.get(label) ?? 0) + 1);
          }
        })(),
      );
    }
    await Promise.all(pending);
    return latencies;
  };
  /** The tenant's Batch job of 60 tasks at the healthy host: seconds from creation to completion. */
  const batchRun = async (round: number, side: string): Promise<number> => {
    const tasks = Array.from({ length: 60 }, (_, n) => ({ url: `${page}?job=${side}-${round}-${n}` }));
    const t0 = performance.now();
    const created = (await (await fetch(`${bench.api}/v1/jobs`, { method: 'POST', headers: { 'X-API-Key': steady, 'Content-Type': 'application/json' }, body: JSON.stringify({ type: 'regular', status: 'closed', tasks }) })).json()) as { job_id: string };
    for (;;) {
      const job = (await (await fetch(`${bench.api}/v1/jobs/${created.job_id}`, { headers: { 'X-API-Key': steady } })).json()) as { latest_run?: { status?: string } };
      if (['completed', 'failed', 'stopped'].includes(job.latest_run?.status ?? '')) return (performance.now() - t0) / 1000;
      if (performance.now() - t0 > 600_000) return Infinity;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };

  const reports: KindReport[] = [];
  const rssBefore = rssMb(pid('api'));
  const ownRssBefore = rssMb(pid('api'), true);
  for (const kind of kinds) {
    if (kind === 'spinning-renders') {
      // A phase of its own (fairness-renders.ts): renders are measured beside it too.
      const lines = await spinningRenders({
        api: bench.api,
        keys: { other: await makeAccount('business'), abuser: await makeAccount('free') },
        seconds: Math.min(55, Math.max(5, Number(options['spin-seconds'] ?? 40))),
        rounds: Math.min(20, Math.max(1, Number(options['spin-rounds'] ?? 3))),
        rate: Math.min(200, Math.max(1, Number(options['spin-rate'] ?? 20))),
        renderConcurrency: Math.min(4, Math.max(1, Number(options['spin-render-concurrency'] ?? 1))),
      });
      console.log('\n[spinning-renders]');
      for (const line of lines) console.log(`  ${line}`);
      continue;
    }
    const keys = kind === 'paused' ? await Promise.all([0, 1, 2].map(() => makeAccount('free', abuserRps))) : [await makeAccount('free', abuserRps)];
    const abuser: ChildProcess = fork(path.join(__dirname, 'fairness-abuser.ts'), ['--api', bench.api, '--keys', keys.join(','), '--site', kind === 'paused' ? limitedSite : site.url, '--kind', kind, '--loops', kind === 'pages' ? '5' : '4'], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const fromAbuser = <T>(test: (message: T) => boolean): Promise<T> =>
      new Promise((resolve) => {
        const listener = (message: T) => {
          if (!test(message)) return;
          abuser.off('message', listener);
          resolve(message);
        };
        abuser.on('message', listener);
      });
    await fromAbuser<{ ready?: boolean }>((message) => message.ready === true);
    const report: KindReport = {
      kind,
      alone: [],
      beside: [],
      roundRatios: [],
      statuses: {},
      bursts: [],
      cpu: { alone: { api: 0, db: 0, worker: 0, abuser: 0, site: 0 }, beside: { api: 0, db: 0, worker: 0, abuser: 0, site: 0 } },
      ...(kind === 'paused' ? { batch: { alone: [], beside: [] } } : {}),
    };
    const cpuNow = () => ({ api: cpuSeconds(pid('api')), db: cpuSeconds(pid('ferretdb')), worker: cpuSeconds(pid('worker')), abuser: cpuSeconds(abuser.pid), site: cpuSeconds(site.pid) });
    const addCpu = (into: KindReport['cpu']['alone'], from: ReturnType<typeof cpuNow>, to: ReturnType<typeof cpuNow>) => {
      for (const part of ['api', 'db', 'worker', 'abuser', 'site'] as const) into[part] += to[part] - from[part];
    };
    // One warm-up round (not counted), then the rounds; the abuser's paused-host jobs are made at its first run and stay.
    for (let round = -1; round < rounds; round++) {
      const t0 = cpuNow();
      const [quiet, batchAlone] = await Promise.all([steadyRun(), kind === 'paused' ? batchRun(round, 'alone') : Promise.resolve(0)]);
      const t1 = cpuNow();
      // The tenant's own load has grown the API to its working set by now: what follows is the abuse's.
      if (round < 0) report.rss = { warm: rssMb(pid('api')), end: NaN, rounds: [] };
      abuser.send({ run: true });
      if (kind === 'paused') await new Promise((resolve) => setTimeout(resolve, 3_000));
      const [busy, batchBeside] = await Promise.all([steadyRun(), kind === 'paused' ? batchRun(round, 'beside') : Promise.resolve(0)]);
      const counted = fromAbuser<{ statuses?: Record<string, number>; bursts?: number[] }>((message) => message.statuses !== undefined);
      abuser.send({ run: false });
      const answer = await counted;
      report.statuses = answer.statuses ?? {};
      // The warm-up phase's is left out below with its latencies.
      report.bursts = (answer.bursts ?? []).slice(1);
      if (round < 0) continue;
      report.rss?.rounds.push(rssMb(pid('api')));
      addCpu(report.cpu.alone, t0, t1);
      addCpu(report.cpu.beside, t1, cpuNow());
      report.alone.push(...quiet);
      report.beside.push(...busy);
      report.roundRatios.push(`${(quantile(busy, 0.5) / quantile(quiet, 0.5)).toFixed(2)}/${(quantile(busy, 0.99) / quantile(quiet, 0.99)).toFixed(2)}`);
      report.batch?.alone.push(batchAlone);
      report.batch?.beside.push(batchBeside);
    }
    abuser.send({ stop: true });
    await new Promise((resolve) => abuser.once('exit', resolve));
    if (report.rss) report.rss.end = rssMb(pid('api'));
    if (kind === 'paused') {
      // The paused-host jobs go, so the next kinds start from a quiet service.
      for (const key of keys) {
        const listed = (await (await fetch(`${bench.api}/v1/jobs?limit=100`, { headers: { 'X-API-Key': key } })).json()) as { jobs?: Array<{ id?: string; job_id?: string }> };
        for (const job of listed.jobs ?? []) await fetch(`${bench.api}/v1/jobs/${job.job_id ?? job.id}`, { method: 'DELETE', headers: { 'X-API-Key': key } });
      }
    }
    reports.push(report);
    printKind(report);
    if (refusals.size > 0) console.log(`  the tenant's answers other than 200: ${[...refusals].map(([label, n]) => `${label}: ${n}`).join(', ')}`);
    refusals.clear();
  }
  const rssAfter = rssMb(pid('api'));
  const ownRssAfter = rssMb(pid('api'), true);

  console.log(`\nLoad (1/5/15 min) at the end: ${loadavg().map((n) => n.toFixed(2)).join(' ')}, ${cpus().length} cores; at the start: ${loadAtStart}`);
  console.log(`The abusers' request budget: ${abuserRps ? `${abuserRps}/s (burst ${2 * abuserRps})` : "their plan's"}; steady Fetch at ${rate}/s, ${rounds} rounds of ${seconds} s a side after one warm-up round`);
  console.log('kind        answers alone/beside   p50 alone → beside (ratio)     p99 alone → beside (ratio)     goals ≤ 1.5 / ≤ 3');
  for (const report of reports) {
    const p50 = [quantile(report.alone, 0.5), quantile(report.beside, 0.5)] as const;
    const p99 = [quantile(report.alone, 0.99), quantile(report.beside, 0.99)] as const;
    console.log(
      `${report.kind.padEnd(11)} ${String(report.alone.length).padStart(6)}/${String(report.beside.length).padEnd(13)} ${ms(p50[0])} → ${ms(p50[1])} (${(p50[1] / p50[0]).toFixed(2)}x)`.padEnd(70) +
        `${ms(p99[0])} → ${ms(p99[1])} (${(p99[1] / p99[0]).toFixed(2)}x)`,
    );
  }
  console.log(
    `API RSS: its own process ${ownRssBefore.toFixed(0)} MB before, ${ownRssAfter.toFixed(0)} MB after (growth ${(ownRssAfter - ownRssBefore).toFixed(0)} MB, goal < 100 MB); with the browser it started for renders ${rssBefore.toFixed(0)} → ${rssAfter.toFixed(0)} MB`,
  );

  if (options.inputs) await inputsPhase(bench.api, loader, page);
  await db.close();
  await bench.close();
  site.close();
}

function printKind(report: KindReport): void {
  const phase = rounds * seconds;
  const share = (value: number) => `${((100 * value) / phase).toFixed(0)}%`;
  const abusive = Object.values(report.statuses).reduce((sum, n) => sum + n, 0);
  console.log(`\n[${report.kind}] p50/p99 ratio by round: ${report.roundRatios.join(', ')}`);
  console.log(`  the abuser's requests started within 50 ms at most (past each round's first 2 s), by round: ${report.bursts.join(', ') || 'none'}`);
  console.log(`  abuser's answers: ${Object.entries(report.statuses).map(([what, n]) => `${what}: ${n}`).join(', ') || 'none'} (${(abusive / phase).toFixed(0)}/s)`);
  console.log(
    `  CPU (share of a core) alone → beside: API ${share(report.cpu.alone.api)} → ${share(report.cpu.beside.api)}, FerretDB ${share(report.cpu.alone.db)} → ${share(report.cpu.beside.db)}, worker ${share(report.cpu.alone.worker)} → ${share(report.cpu.beside.worker)}, the abuser's own process ${share(report.cpu.beside.abuser)}, the target site's ${share(report.cpu.alone.site)} → ${share(report.cpu.beside.site)}`,
  );
  if (report.rss) console.log(`  API RSS: ${report.rss.warm.toFixed(0)} MB once the tenant's load had warmed it, ${report.rss.end.toFixed(0)} MB after the kind's rounds (the abuse's growth: ${(report.rss.end - report.rss.warm).toFixed(0)} MB; after each round's abuse: ${report.rss.rounds.map((mb) => mb.toFixed(0)).join(', ')} MB)`);
  if (report.batch) {
    const median = (values: number[]) => quantile(values, 0.5);
    console.log(`  the tenant's 60-task Batch job at a healthy host: ${median(report.batch.alone).toFixed(1)} s alone, ${median(report.batch.beside).toFixed(1)} s beside (${(median(report.batch.beside) / median(report.batch.alone)).toFixed(2)}x, medians of ${report.batch.alone.length})`);
  }
}

/** `/healthz` while four large inputs are uploaded, then while four jobs are made from them. */
async function inputsPhase(api: string, loader: string, page: string): Promise<void> {
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
        await (await fetch(`${api}/healthz`)).arrayBuffer();
        latencies.push(performance.now() - t0);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return latencies;
    })();
  // The same polling with nothing else running, for scale on this machine.
  const idle = await poll(new Promise((resolve) => setTimeout(resolve, 5_000)));
  const inputs = await Promise.all(
    [0, 1, 2, 3].map(async () => {
      const created = await fetch(`${api}/v1/job_inputs`, { method: 'POST', headers: { 'X-API-Key': loader, 'Content-Type': 'application/json' }, body: JSON.stringify({ type: 'csv', csv: { fields: { url: 0, external_id: 1 } } }) });
      return (await created.json()) as { file_input_id: string; upload: { url: string } };
    }),
  );
  const uploads = Promise.all(inputs.map((input) => fetch(input.upload.url, { method: 'PUT', headers: { 'content-type': 'text/csv' }, body: csv }).then(async (response) => [response.status, await response.text()] as const)));
  const duringUploads = await poll(uploads);
  const uploaded = await uploads;
  const jobs = Promise.all(
    inputs.map((input) =>
      fetch(`${api}/v1/jobs`, { method: 'POST', headers: { 'X-API-Key': loader, 'Content-Type': 'application/json' }, body: JSON.stringify({ file_input_id: input.file_input_id, status: 'closed' }) }).then(async (response) => {
        const body = (await response.json()) as { job_id?: string; accepted_tasks?: number };
        if (body.job_id) await fetch(`${api}/v1/jobs/${body.job_id}/stop`, { method: 'POST', headers: { 'X-API-Key': loader } }).catch(() => undefined);
        return [response.status, body.accepted_tasks] as const;
      }),
    ),
  );
  const duringJobs = await poll(jobs);
  const made = await jobs;
  const p50 = (values: number[]) => quantile(values, 0.5);
  const p99 = (values: number[]) => quantile(values, 0.99);
  console.log(`\nFour ${(csv.length / 1024 / 1024).toFixed(1)} MB CSV inputs (${rows} rows each): uploads answered ${uploaded.map(([status]) => status).join(', ')}`);
  console.log(`  /healthz idle (5 s, same polling): p50 ${ms(p50(idle))}, p99 ${ms(p99(idle))}, max ${ms(Math.max(...idle))} over ${idle.length} polls`);
  console.log(`  /healthz during the uploads: p50 ${ms(p50(duringUploads))}, p99 ${ms(p99(duringUploads))}, max ${ms(Math.max(...duringUploads))} over ${duringUploads.length} polls (goal p99 < 50 ms)`);
  console.log(`  jobs from them answered ${made.map(([status, tasks]) => `${status} (${tasks ?? '-'} tasks)`).join(', ')}`);
  console.log(`  /healthz during the job creations: p50 ${ms(p50(duringJobs))}, p99 ${ms(p99(duringJobs))}, max ${ms(Math.max(...duringJobs))} over ${duringJobs.length} polls`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
