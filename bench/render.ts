/**
 * `npx tsx bench/render.ts`: `js_render` through the whole service (FerretDB, Temporal, the worker and
 * the API started as `npm start` does, on free ports), in one run, each figure against a baseline
 * measured in the same run:
 *
 * 1. Completeness: the pages of test/fixtures/browser/completeness.ts (content added 100 ms to 1.5 s
 *    after load by timers, fetches, a chain of two requests, a hydration; and pages that never go
 *    quiet), fetched with `js_render` and `json_response`, under the settle rule and under the rule
 *    before it (the page taken at load: the API restarted with RENDER_SETTLE_CAP_MS=0), in alternating
 *    rounds: late content captured (goal 100%), pages/s of each (the cost of completeness), `settled_by`.
 * 2. Memory: peak PSS of the whole service (the API's and the worker's Node processes and every Chromium
 *    process under them; shared pages counted once) during a 60-page rendered run at concurrency 2 and
 *    4, each from a freshly started API, against one Playwright Chromium with a fresh context per page
 *    driven by a bare Node process (bench/playwright-baseline.mjs; same browser, same viewport).
 * 3. The API's own pool: what sending a render to the worker would add at least (the round trip of
 *    `/readyz?deep=true`: API → Temporal → worker activity → MongoDB → API, against `/readyz`), and
 *    what a second pool costs while both render (API and worker at 2 each against the API at 4).
 * 4. Idle: `--idle-seconds` (120) after the last render, the Chromium processes left (goal none) and
 *    the service's PSS.
 *
 *   npx tsx bench/render.ts [--rounds=3] [--memory-rounds=2] [--pages=60] [--idle-seconds=120] [--node-options=...] [--sections=1234]
 *
 * `--node-options` runs the API and the worker with those Node options (NODE_OPTIONS), to measure
 * settings of their V8 heaps (`--max-semi-space-size=2`, say) against the same baseline.
 */
import { parseArgs } from 'node:util';
import { loadConfig, processConfig } from '../core/config';
import { findChromium } from '../engine/browser';
import { LATE_PAGES, RESTLESS_PAGES, startCompletenessSite } from '../test/fixtures/browser/completeness';
import { startBenchStack, type BenchStack } from './crawl';
import { baselinePeak, chromiumOf, cpuOf, mb, peakDuring, range, sample, type Sample } from './render-measure';

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
const RESTLESS = Object.keys(RESTLESS_PAGES);
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
    'quiet window (now)': { env: { RENDER_SETTLE_CAP_MS: undefined }, captured: 0, late: 0, pages: 0, seconds: 0, latencies: [] as number[], ended: new Map<string, number>(), rates: [] as number[] },
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
  console.log(`\npages/s quiet window / at load: ${(now!.pages / now!.seconds / (before!.pages / before!.seconds)).toFixed(2)} (rounds ${range(ratios)}): the cost of completeness`);
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

async function apiPool(bench: BenchStack, site: Awaited<ReturnType<typeof startCompletenessSite>>, renderMs: number, alone: Sample[]): Promise<void> {
  const everything = () => (['api', 'worker', 'temporal', 'ferretdb'] as const).map((name) => bench.stack.component(name).pid);
  const calls = { shallow: { ms: [] as number[], cpu: 0 }, deep: { ms: [] as number[], cpu: 0 } };
  for (let index = 0; index < 60; index++) {
    const side = index % 2 === 0 ? calls.deep : calls.shallow;
    const cpu = cpuOf(everything());
    const began = performance.now();
    const response = await fetch(`${bench.api}/readyz${side === calls.deep ? '?deep=true' : ''}`);
    await response.text();
    if (response.status !== 200) throw new Error(`readyz: ${response.status}`);
    side.ms.push(performance.now() - began);
    side.cpu += cpuOf(everything()) - cpu;
  }
  const median = (list: number[]): number => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)] ?? 0;
  const extraMs = median(calls.deep.ms) - median(calls.shallow.ms);
  const extraCpu = ((calls.deep.cpu - calls.shallow.cpu) / calls.deep.ms.length) * 1000;
  console.log('\n## 3. Should the API render when a worker runs on the same machine?\n');
  console.log(`- a render sent to the worker would add at least the round trip API → Temporal → worker → MongoDB → API: ${extraMs.toFixed(0)} ms (median, /readyz?deep=true ${median(calls.deep.ms).toFixed(0)} ms against /readyz ${median(calls.shallow.ms).toFixed(0)} ms) and ${extraCpu.toFixed(0)} ms of CPU (API, worker, Temporal, FerretDB), before the page itself travels${renderMs > 0 ? `; a rendered page takes ${renderMs.toFixed(0)} ms (median, section 1)` : ''}`);

  // Both pools at once: the API at 2 (Fetch) and the worker at 2 (a Batch job of js_render tasks).
  await restartApi(bench);
  const urls = Array.from({ length: PAGES }, (_, index) => site.at(LATE[index % LATE.length] as string));
  const headers = { 'X-API-Key': bench.key, 'Content-Type': 'application/json' };
  const call = async (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
    const response = await fetch(`${bench.api}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    if (response.status >= 400) throw new Error(`${method} ${path}: ${response.status} ${(await response.text()).slice(0, 300)}`);
    return (await response.json()) as Record<string, unknown>;
  };
  const batch = async (): Promise<void> => {
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
  const before = sample(service(bench)());
  const both = await peakDuring(service(bench), () => Promise.all([runAll(urls, 2, async (url) => void (await rendered(bench, url))), batch()]));
  const single = alone.map((peak) => peak.pss);
  console.log(
    `- two pools rendering at once (API 2 + worker 2, ${PAGES} pages each): peak ${mb(both.peak.pss)} (${parts(both.peak)}); ` +
      `one pool at 4 (section 2): ${single.map(mb).join(', ')}; a second pool costs ${range(single.map((pss) => (both.peak.pss - pss) / 1024 / 1024), 0)} MB while both render ` +
      `(the worker's Node went from ${mb(before.parts.get('worker node')?.pss ?? 0)} to ${mb(both.peak.parts.get('worker node')?.pss ?? 0)}: playwright is loaded with its first render)`,
  );
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
    const renderMs = SECTIONS.includes('1') ? await completeness(bench, site) : 0;
    const peaks = SECTIONS.includes('2') ? await memory(bench, site) : new Map<number, Sample[]>();
    if (SECTIONS.includes('3')) await apiPool(bench, site, renderMs, peaks.get(4) ?? []);
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
