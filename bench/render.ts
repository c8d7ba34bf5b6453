/**
 * `npx tsx bench/render.ts`: `js_render` through the whole service (FerretDB, Temporal, the worker and
 * the API started as `npm start` does, on free ports), in one run, each figure against a baseline
 * measured in the same run:
 *
 * 1. Completeness: the pages of test/fixtures/browser/completeness.ts (content added 100 ms to 1.5 s
 *    after load by timers, fetches, a chain of two requests, a scheduler's task, a hydration; pages that
 *    never go still and a page with nothing after load), fetched with `js_render` and `json_response`, under the settle rule and under the rule
 *    before it (the page taken at load: the API restarted with RENDER_SETTLE_CAP_MS=0), in alternating
 *    rounds: late content captured (goal 100%), pages/s of each (the cost of completeness), `settled_by`.
 * 2. Memory: peak PSS of the whole service (the API's and the worker's Node processes and every Chromium
 *    process under them; shared pages counted once) during a 60-page rendered run at concurrency 2 and
 *    4, each from a freshly started API, against one Playwright Chromium with a fresh context per page
 *    driven by a bare Node process (bench/playwright-baseline.mjs; same browser, same viewport).
 * 3. One browser per machine: the median latency of an API render on the browser the worker hosts
 *    (over the socket, engine/browser/share.ts) against on its own (goal: added < 5 ms), and peak PSS
 *    while the API (2 at once) and the worker (a Batch run, 2 at once) both render, sharing one browser
 *    against one each (BROWSER_SHARE=false), alternating.
 * 4. Idle: `--idle-seconds` (120) after the last render, the Chromium processes left (goal none) and
 *    the service's PSS.
 *
 *   npx tsx bench/render.ts [--rounds=3] [--memory-rounds=2] [--pages=60] [--idle-seconds=120] [--node-options=...] [--sections=1234]
 *
 * `--node-options` runs the API and the worker with those Node options (NODE_OPTIONS), to measure
 * settings of their V8 heaps (`--max-semi-space-size=2`, say) against the same baseline.
 */
import { parseArgs } from 'node:util';
import { loadConfig, processConfig } from '../base/config';
import { findChromium } from '../engine/browser';
import { LATE_PAGES, RESTLESS_PAGES, STILL_PAGES, startCompletenessSite } from '../test/fixtures/browser/completeness';
import { startBenchStack, type BenchStack } from './crawl';
import { baselinePeak, chromiumOf, mb, peakDuring, range, sample, type Sample } from './render-measure';

const { values } = parseArgs({
  options: { rounds: { type: 'string' }, 'memory-rounds': { type: 'string' }, pages: { type: 'string' }, 'idle-seconds': { type: 'string' }, 'node-options': { type: 'string' }, sections: { type: 'string' } },
});
const count = (raw: string | undefined, fallback: number, max: number): number => Math.min(max, Math.max(1, Number(raw ?? fallback) || fallback));
const ROUNDS = count(values.rounds, 3, 20);
const MEMORY_ROUNDS = count(values['memory-rounds'], 2, 10);
const PAGES = count(values.pages, 60, 1_000);
const IDLE_SECONDS = Math.min(3_600, Math.max(0, Number(values['idle-seconds'] ?? 120)));
const SECTIONS = values.sections ?? '1234';
const LATE = Object.keys(LATE_PAGES);
const RESTLESS = [...Object.keys(RESTLESS_PAGES), ...Object.keys(STILL_PAGES)];
/** The desktop viewport the service renders with (engine/browser/render.ts), for the baseline too. */
const VIEWPORT = { width: 1920, height: 1080 };

async function runAll<T>(items: T[], concurrency: number, one: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(Array.from({ length: concurrency }, async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await one(item);
  }));
}

async function rendered(bench: BenchStack, url: string): Promise<{ html: string; settled_by?: string }> {
  const query = new URLSearchParams({ apikey: bench.key, url, js_render: 'true', json_response: 'true' });
  const response = await fetch(`${bench.api}/v1/?${query.toString()}`);
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${(await response.text()).slice(0, 300)}`);
  return (await response.json()) as { html: string; settled_by?: string };
}

/** A fresh API process (no browser launched yet) with `env` on top of the stack's. */
async function restartApi(bench: BenchStack, env: Record<string, string | undefined> = {}): Promise<void> {
  const api = bench.stack.component('api');
  await api.stop();
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete api.spec.env[name];
    else api.spec.env[name] = value;
  }
  await bench.stack.startOne('api');
}

const service = (bench: BenchStack) => () => ({ api: [bench.stack.component('api').pid], worker: [bench.stack.component('worker').pid] });

const parts = (sampled: Sample): string =>
  [...sampled.parts]
    .sort((a, b) => b[1].pss - a[1].pss)
    .map(([part, memory]) => `${part}${memory.processes > 1 ? ` ×${memory.processes}` : ''} ${mb(memory.pss)}`)
    .join(', ');

async function completeness(bench: BenchStack, site: Awaited<ReturnType<typeof startCompletenessSite>>): Promise<number> {
  const rules = {
    'settle on pending work (now)': { env: { RENDER_SETTLE_CAP_MS: undefined }, captured: 0, late: 0, pages: 0, seconds: 0, latencies: [] as number[], ended: new Map<string, number>(), rates: [] as number[] },
    'at load (before)': { env: { RENDER_SETTLE_CAP_MS: '0' }, captured: 0, late: 0, pages: 0, seconds: 0, latencies: [] as number[], ended: new Map<string, number>(), rates: [] as number[] },
  };
  const urls = Array.from({ length: 3 }, () => [...LATE, ...RESTLESS]).flat();
  for (let round = 0; round < ROUNDS; round++) {
    const order = Object.values(rules);
    for (const rule of round % 2 === 0 ? order : order.reverse()) {
      await restartApi(bench, rule.env);
      await rendered(bench, site.at(LATE[0] as string)); // the browser launches before the clock starts
      const started = performance.now();
      await runAll(urls, 2, async (name) => {
        const began = performance.now();
        const answer = await rendered(bench, site.at(name));
        rule.latencies.push(performance.now() - began);
        rule.pages++;
        const ended = `${name}:${answer.settled_by ?? '?'}`;
        rule.ended.set(ended, (rule.ended.get(ended) ?? 0) + 1);
        if (!LATE.includes(name)) return;
        rule.late++;
        if (answer.html.includes(`LATE:${name}`)) rule.captured++;
      });
      const seconds = (performance.now() - started) / 1000;
      rule.seconds += seconds;
      rule.rates.push(urls.length / seconds);
    }
  }
  console.log(`\n## 1. Completeness: ${LATE.length} late and ${RESTLESS.length} restless pages ×3 per round, ${ROUNDS} rounds, concurrency 2, through the API\n`);
  console.log('| rule | late content captured | pages/s (rounds) | median latency | ended by |');
  console.log('|---|---|---|---|---|');
  for (const [name, rule] of Object.entries(rules)) {
    const median = [...rule.latencies].sort((a, b) => a - b)[Math.floor(rule.latencies.length / 2)] ?? 0;
    const ended = [...rule.ended].sort().map(([key, times]) => `${key}×${times}`).join(' ');
    console.log(`| ${name} | ${rule.captured}/${rule.late} (${((100 * rule.captured) / rule.late).toFixed(0)}%) | ${(rule.pages / rule.seconds).toFixed(2)} (${range(rule.rates)}) | ${median.toFixed(0)} ms | ${ended} |`);
  }
  const [now, before] = Object.values(rules);
  const ratios = now!.rates.map((rate, index) => rate / (before!.rates[index] ?? rate));
  console.log(`\npages/s settle on pending work / at load: ${(now!.pages / now!.seconds / (before!.pages / before!.seconds)).toFixed(2)} (rounds ${range(ratios)}): the cost of completeness`);
  return [...now!.latencies].sort((a, b) => a - b)[Math.floor(now!.latencies.length / 2)] ?? 0;
}

async function memory(bench: BenchStack, site: Awaited<ReturnType<typeof startCompletenessSite>>): Promise<Map<number, Sample[]>> {
  const executablePath = findChromium(processConfig().chromiumPath);
  const urls = Array.from({ length: PAGES }, (_, index) => site.at(LATE[index % LATE.length] as string));
  const peaks = new Map<number, Sample[]>();
  console.log(`\n## 2. Peak memory of the whole service, ${PAGES} rendered pages (late pages), against one Playwright Chromium with a context per page\n`);
  console.log('PSS (its anonymous part in brackets: unlike file pages, it does not depend on what else on the machine maps the same binaries)\n');
  console.log('| concurrency | round | service | of it Chromium | baseline | of it Chromium | whole ratio (goal ≤ 1.2) | Chromium ratio |');
  console.log('|---|---|---|---|---|---|---|---|');
  const rows: string[] = [];
  for (const concurrency of [2, 4]) {
    for (let round = 0; round < MEMORY_ROUNDS; round++) {
      const runBaseline = async () => {
        // No Chromium of the service alive meanwhile: its pages of the Chromium binary would be shared
        // with the baseline's and lower its PSS (≈30 MB of every Chromium process's PSS is that binary).
        await restartApi(bench);
        return baselinePeak({ executablePath, urls, concurrency, viewport: VIEWPORT });
      };
      const runService = async () => {
        await restartApi(bench);
        const run = await peakDuring(service(bench), () => runAll(urls, concurrency, async (url) => void (await rendered(bench, url))));
        return run.peak;
      };
      const baseline = round % 2 === 0 ? (await runBaseline()).peak : undefined;
      const ours = await runService();
      const base = baseline ?? (await runBaseline()).peak;
      peaks.set(concurrency, [...(peaks.get(concurrency) ?? []), ours]);
      type Field = 'pss' | 'anon';
      const pair = (value: (field: Field) => number): string => `${mb(value('pss'))} (${mb(value('anon'))})`;
      const ratio = (value: (sampled: Sample, field: Field) => number): string =>
        `${(value(ours, 'pss') / value(base, 'pss')).toFixed(2)} (${(value(ours, 'anon') / value(base, 'anon')).toFixed(2)})`;
      console.log(
        `| ${concurrency} | ${round + 1} | ${pair((field) => ours[field])} | ${pair((field) => chromiumOf(ours, field))} | ` +
          `${pair((field) => base[field])} | ${pair((field) => chromiumOf(base, field))} | ${ratio((sampled, field) => sampled[field])} | ${ratio(chromiumOf)} |`,
      );
      rows.push(`c=${concurrency} r${round + 1}: service ${parts(ours)}; baseline ${parts(base)}`);
    }
  }
  console.log(`\nAt each peak:\n${rows.map((row) => `- ${row}`).join('\n')}`);
  return peaks;
}

/** Restarts the worker and the API (in that order) with `env` on top: neither has a browser yet. */
async function restartBoth(bench: BenchStack, env: Record<string, string | undefined> = {}): Promise<void> {
  const worker = bench.stack.component('worker');
  await worker.stop();
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete worker.spec.env[name];
    else worker.spec.env[name] = value;
  }
  await bench.stack.startOne('worker');
  await restartApi(bench, env);
}

async function sharing(bench: BenchStack, site: Awaited<ReturnType<typeof startCompletenessSite>>, alone: Sample[]): Promise<void> {
  const headers = { 'X-API-Key': bench.key, 'Content-Type': 'application/json' };
  const call = async (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
    const response = await fetch(`${bench.api}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    if (response.status >= 400) throw new Error(`${method} ${path}: ${response.status} ${(await response.text()).slice(0, 300)}`);
    return (await response.json()) as Record<string, unknown>;
  };
  const batch = async (urls: string[]): Promise<void> => {
    const job = (await call('POST', '/v1/jobs', { type: 'regular', status: 'open', tasks: [] })).job_id as string;
    await call('POST', `/v1/jobs/${job}/tasks`, { tasks: urls.map((url) => ({ url, zenrows_params: { js_render: true } })), last_batch: true });
    for (let poll = 0; poll < 1_200; poll++) {
      const run = (await call('GET', `/v1/jobs/${job}`)).latest_run as { status: string; stats: { completed: number } } | null;
      if (run && ['completed', 'failed', 'stopped'].includes(run.status)) {
        if (run.status !== 'completed' || run.stats.completed !== urls.length) throw new Error(`batch run ${run.status}: ${JSON.stringify(run.stats)}`);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error('the batch run did not end in 5 minutes');
  };
  const median = (list: number[]): number => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)] ?? 0;

  // The added latency: API renders when the API hosts the browser against when the worker does (the
  // worker rendered first) and the API's renders cross the socket; a page with nothing after load.
  const latency = { host: [] as number[], client: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    const order: Array<keyof typeof latency> = round % 2 === 0 ? ['host', 'client'] : ['client', 'host'];
    for (const side of order) {
      await restartBoth(bench);
      if (side === 'client') await batch([site.at('nothing')]);
      for (let index = 0; index < 41; index++) {
        const began = performance.now();
        await rendered(bench, site.at('nothing'));
        if (index > 0) latency[side].push(performance.now() - began);
      }
    }
  }
  console.log('\n## 3. One browser per machine\n');
  console.log(
    `- an API render on the worker's browser (over the socket) against on its own: median ${median(latency.client).toFixed(1)} ms against ${median(latency.host).toFixed(1)} ms, ` +
      `added ${(median(latency.client) - median(latency.host)).toFixed(1)} ms (goal < 5; ${latency.host.length} renders each, ${ROUNDS} alternating rounds)`,
  );

  // Both rendering (the API at 2, the worker at 2 through a Batch run): one shared browser against one each.
  const urls = Array.from({ length: PAGES }, (_, index) => site.at(LATE[index % LATE.length] as string));
  const peaks: Record<'shared' | 'own', Sample[]> = { shared: [], own: [] };
  for (let round = 0; round < MEMORY_ROUNDS; round++) {
    const order: Array<keyof typeof peaks> = round % 2 === 0 ? ['shared', 'own'] : ['own', 'shared'];
    for (const mode of order) {
      await restartBoth(bench, { BROWSER_SHARE: mode === 'shared' ? undefined : 'false' });
      const both = await peakDuring(service(bench), () => Promise.all([runAll(urls, 2, async (url) => void (await rendered(bench, url))), batch(urls)]));
      peaks[mode].push(both.peak);
      console.log(`- both rendering, ${mode === 'shared' ? 'one browser' : 'a browser each'} (round ${round + 1}): peak ${mb(both.peak.pss)}, ${both.peak.chromiumProcesses} Chromium processes at the peak (${parts(both.peak)})`);
    }
  }
  const shared = peaks.shared.map((peak) => peak.pss);
  const own = peaks.own.map((peak) => peak.pss);
  console.log(
    `- the second browser cost ${range(own.map((pss, index) => (pss - (shared[index] ?? pss)) / 1024 / 1024), 0)} MB while both render; ` +
      `one browser for both peaked ${range(shared.map((pss) => pss / 1024 / 1024), 0)} MB against the API alone at 4 (section 2) ${alone.map((peak) => mb(peak.pss)).join(', ') || '(not run)'}`,
  );
  // Section 4 looks at the service this run left: restarted only when it ended with a browser each.
  if (MEMORY_ROUNDS % 2 === 1) await restartBoth(bench);
}

async function idle(bench: BenchStack, idleCloseMs: number): Promise<void> {
  const right = sample(service(bench)());
  await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
  const later = sample(service(bench)());
  console.log(`\n## 4. Idle (BROWSER_IDLE_CLOSE_MS ${idleCloseMs})\n`);
  console.log(`- right after the last render: ${right.chromiumProcesses} Chromium processes, ${mb(right.pss)} PSS (${parts(right)})`);
  console.log(`- ${IDLE_SECONDS} s later: ${later.chromiumProcesses} Chromium processes (goal 0), ${mb(later.pss)} PSS (${parts(later)})`);
}

async function main(): Promise<void> {
  const site = await startCompletenessSite();
  const bench = await startBenchStack({
    FREE_PLAN_CONCURRENCY: '8',
    BATCH_CONCURRENCY: '2',
    MONGODB_DATABASE: 'fetchplane_render_bench',
    TEMPORAL_TASK_QUEUE: 'fetchplane-render-bench',
    ...(values['node-options'] ? { NODE_OPTIONS: values['node-options'] } : {}),
  });
  try {
    const serviceConfig = loadConfig(bench.stack.component('api').spec.env);
    console.log(`# bench/render.ts: js_render through the service, Chromium ${findChromium(serviceConfig.chromiumPath)}, BROWSER_MAX_PAGES ${serviceConfig.browserMaxPages}${values['node-options'] ? `, NODE_OPTIONS ${values['node-options']}` : ''}`);
    if (SECTIONS.includes('1')) await completeness(bench, site);
    const peaks = SECTIONS.includes('2') ? await memory(bench, site) : new Map<number, Sample[]>();
    if (SECTIONS.includes('3')) await sharing(bench, site, peaks.get(4) ?? []);
    if (SECTIONS.includes('4')) await idle(bench, serviceConfig.browserIdleCloseMs);
  } finally {
    await bench.close();
    await site.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
