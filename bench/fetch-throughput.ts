/**
 * Plain fetches of one local page through the service (API process with authentication, a concurrency
 * slot and exact charging on the real database) against the same fetches made directly with undici,
 * same concurrency and duration, in one run. Prints requests per second, p50 and p99 of both, and the
 * ratio service/direct (goal ≥ 0.5).
 *
 * A third side measures the floor of the machine: the same fetches through `bare-proxy.ts`, a Node
 * HTTP server that forwards to undici and does nothing else. service/bare is what the service's
 * features cost; bare/direct is what any Node proxy in between costs on this machine.
 *
 * The sides alternate in `--rounds` short phases, so that the machine's speed drifting during the
 * run (seen here: ±25% over minutes) weighs on all alike; the ratios of each round are printed too.
 * Also prints the CPU seconds each part used on each side (this process is both the client and the
 * target site).
 *
 *   npx tsx bench/fetch-throughput.ts [--seconds 10] [--rounds 5] [--concurrency 32] [--api-processes 1]
 *                                      [--response-type markdown|plaintext] [--page-kb 3] [--env NAME=VALUE ...]
 *
 * `--response-type` has the service convert the page (the other sides fetch it as it is), `--page-kb`
 * sizes the page (paragraphs of a few links and emphasis, about 40 characters a node), `--env` sets the
 * service's configuration: with `--env HTML_INLINE_MAX_SIZE=0` (every output on a worker thread) against
 * a large value (every small page inline), at several sizes, it measures where inline is cheaper.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Agent, request } from 'undici';
import { createAccounts } from '../core/accounts';
import { processConfig } from '../base/config';
import { openDatabase } from '../base/db';
import { SERVICE_INDEXES } from '../core/indexes';
import { createLogger } from '../base/log';
import { childPids, cpuSeconds } from '../scripts/stack/proc';
import { Stack, type ComponentName } from '../scripts/stack/stack';

const argument = (name: string, fallback: number): number => {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
};
const SECONDS = argument('seconds', 10);
const CONCURRENCY = argument('concurrency', 32);
const API_PROCESSES = argument('api-processes', 1);
const ROUNDS = Math.max(1, argument('rounds', 5));
const textArgument = (name: string): string | undefined => {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? process.argv[index + 1] : undefined;
};
const RESPONSE_TYPE = textArgument('response-type');
const PAGE_KB = argument('page-kb', 0);
/** `--env NAME=VALUE`, repeatable: the service's configuration. */
const SERVICE_ENV = Object.fromEntries(
  process.argv.flatMap((arg, index) => (arg === '--env' ? [process.argv[index + 1] ?? ''] : [])).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
);
const PARAGRAPH = '<p>Lorem <a href="/a">ipsum</a> dolor <em>sit</em> amet, <b>consectetur</b> adipiscing elit.</p>';
const PAGE = `<!doctype html><html><head><title>bench</title></head><body>${PAGE_KB > 0 ? PARAGRAPH.repeat(Math.max(1, Math.round((PAGE_KB * 1024) / PARAGRAPH.length))) : '<p>Lorem ipsum dolor sit amet.</p>'.repeat(100)}</body></html>`;

interface Run {
  requests: number;
  failures: number;
  latencies: number[];
  seconds: number;
}

async function load(url: string, dispatcher: Agent, seconds: number): Promise<Run> {
  const latencies: number[] = [];
  let failures = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        const began = performance.now();
        const response = await request(url, { dispatcher });
        await response.body.arrayBuffer();
        if (response.statusCode !== 200) failures += 1;
        latencies.push(performance.now() - began);
      }
    }),
  );
  return { requests: latencies.length, failures, latencies, seconds: (performance.now() - started) / 1000 };
}

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

function report(name: string, run: Run): number {
  const sorted = [...run.latencies].sort((a, b) => a - b);
  const rate = run.requests / run.seconds;
  console.log(
    `${name.padEnd(22)} ${rate.toFixed(0).padStart(7)} req/s   p50 ${percentile(sorted, 50).toFixed(2).padStart(7)} ms   p99 ${percentile(sorted, 99).toFixed(2).padStart(7)} ms   failures ${run.failures}`,
  );
  return rate;
}

const merge = (total: Run, run: Run): Run => ({
  requests: total.requests + run.requests,
  failures: total.failures + run.failures,
  latencies: total.latencies.concat(run.latencies),
  seconds: total.seconds + run.seconds,
});

type Parts = Record<'bench' | 'bare' | 'api' | 'ferretdb' | 'temporal' | 'worker', number>;

/** CPU seconds each part used since the last call: this process (client and target), the bare proxy, the API, the rest of the stack. */
function cpuMeter(stack: Stack, barePid: number): () => Parts {
  const pidsOf = (name: ComponentName): number[] => {
    const pid = stack.component(name).pid;
    return pid === undefined ? [] : [pid, ...childPids(pid)];
  };
  const read = (): Parts => ({
    bench: (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
    bare: cpuSeconds(barePid),
    api: pidsOf('api').reduce((sum, pid) => sum + cpuSeconds(pid), 0),
    ferretdb: pidsOf('ferretdb').reduce((sum, pid) => sum + cpuSeconds(pid), 0),
    temporal: pidsOf('temporal').reduce((sum, pid) => sum + cpuSeconds(pid), 0),
    worker: pidsOf('worker').reduce((sum, pid) => sum + cpuSeconds(pid), 0),
  });
  let last = read();
  return () => {
    const now = read();
    const used = Object.fromEntries(Object.entries(now).map(([name, value]) => [name, value - last[name as keyof Parts]])) as Parts;
    last = now;
    return used;
  };
}

const addParts = (a: Parts, b: Parts): Parts => Object.fromEntries(Object.entries(a).map(([name, value]) => [name, value + b[name as keyof Parts]])) as Parts;
const showParts = (parts: Parts): string => Object.entries(parts).map(([name, value]) => `${name} ${value.toFixed(1)}`).join(', ');

async function main(): Promise<void> {
  const target = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(PAGE);
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  const targetUrl = `http://127.0.0.1:${(target.address() as { port: number }).port}/`;

  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'fetchplane-bench-'));
  const stack = new Stack({
    config: { ...processConfig(), dataDir },
    ports: { api: 0, ferretdb: 0, temporal: 0, temporalUi: 0 },
    serviceEnv: {
      LOG_LEVEL: 'warn',
      TARGET_ALLOWLIST: '127.0.0.1',
      FREE_PLAN_CONCURRENCY: String(CONCURRENCY * 2),
      API_PROCESSES: String(API_PROCESSES),
      ...SERVICE_ENV,
    },
  });
  const log = createLogger('warn');
  const dispatcher = new Agent({ connections: CONCURRENCY * 2, keepAliveTimeout: 30_000 });
  const bare = fork(path.join(__dirname, 'bare-proxy.ts'), [], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  try {
    const barePort = await new Promise<number>((resolve, reject) => {
      bare.once('message', (port) => resolve(Number(port)));
      bare.once('exit', (code) => reject(new Error(`the bare proxy exited (${code})`)));
    });
    await stack.start();
    const config = { ...processConfig(), mongodbUrl: stack.urls.mongodb };
    const db = await openDatabase(config, log, { indexes: SERVICE_INDEXES });
    const accounts = createAccounts({ db: db.db, config, log });
    const account = await accounts.store.createAccount({ plan: 'free', overrides: { credits: 10_000_000, concurrency: CONCURRENCY * 2, requestsPerSecond: 1_000_000, requestBurst: 1_000_000, requestsInFlight: 1_000_000 } });
    const { key } = await accounts.store.createKey(account._id);
    await db.close();
    const sides = [
      ['direct', targetUrl],
      ['bare', `http://127.0.0.1:${barePort}/v1/?url=${encodeURIComponent(targetUrl)}`],
      ['service', `${stack.urls.api}/v1/?apikey=${key}&url=${encodeURIComponent(targetUrl)}${RESPONSE_TYPE ? `&response_type=${RESPONSE_TYPE}` : ''}`],
    ] as const;
    type Side = (typeof sides)[number][0];

    // Warm every path (connection pools, key cache, credit allowance, JIT) under the same load first.
    for (const [, url] of sides) await load(url, dispatcher, 2);
    console.log(
      `${RESPONSE_TYPE ? `response_type=${RESPONSE_TYPE}` : 'plain'} fetches of one local page (${(PAGE.length / 1024).toFixed(1)} KB), concurrency ${CONCURRENCY}, ${SECONDS} s each in ${ROUNDS} alternating rounds, API_PROCESSES=${API_PROCESSES}${Object.keys(SERVICE_ENV).length > 0 ? `, ${Object.entries(SERVICE_ENV).map(([name, value]) => `${name}=${value}`).join(' ')}` : ''}`,
    );
    const cpu = cpuMeter(stack, bare.pid ?? 0);
    const empty: Run = { requests: 0, failures: 0, latencies: [], seconds: 0 };
    const zero: Parts = { bench: 0, bare: 0, api: 0, ferretdb: 0, temporal: 0, worker: 0 };
    const totals = Object.fromEntries(sides.map(([side]) => [side, { run: empty, cpu: zero }])) as Record<Side, { run: Run; cpu: Parts }>;
    const rounds: Array<Record<Side, number>> = [];
    for (let round = 0; round < ROUNDS; round++) {
      const rates = {} as Record<Side, number>;
      for (const [side, url] of sides) {
        cpu();
        const run = await load(url, dispatcher, SECONDS / ROUNDS);
        totals[side] = { run: merge(totals[side].run, run), cpu: addParts(totals[side].cpu, cpu()) };
        rates[side] = run.requests / run.seconds;
      }
      rounds.push(rates);
    }
    const perRequest = (side: Side, part: keyof Parts): string =>
      `${part} ${((totals[side].cpu[part] / totals[side].run.requests) * 1e6).toFixed(0)} µs per request`;
    const direct = report('direct (undici)', totals.direct.run);
    console.log(`  CPU s: ${showParts(totals.direct.cpu)}; ${perRequest('direct', 'bench')}`);
    const floor = report('through a bare proxy', totals.bare.run);
    console.log(`  CPU s: ${showParts(totals.bare.cpu)}; ${perRequest('bare', 'bare')}`);
    const service = report('through the service', totals.service.run);
    console.log(`  CPU s: ${showParts(totals.service.cpu)}; ${perRequest('service', 'api')}`);
    const each = (ratio: (rates: Record<Side, number>) => number): string => rounds.map((rates) => ratio(rates).toFixed(3)).join(' ');
    console.log(`service/direct of each round: ${each((rates) => rates.service / rates.direct)}`);
    console.log(`bare/direct of each round:    ${each((rates) => rates.bare / rates.direct)}`);
    console.log(`service/bare of each round:   ${each((rates) => rates.service / rates.bare)}`);
    console.log(`ratio bare proxy/direct: ${(floor / direct).toFixed(3)} (what any Node proxy in between leaves on this machine)`);
    console.log(`ratio service/bare proxy: ${(service / floor).toFixed(3)}`);
    console.log(`ratio service/direct: ${(service / direct).toFixed(3)} (goal ≥ 0.5)`);
  } finally {
    bare.kill();
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
