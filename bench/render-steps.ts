/**
 * `npx tsx bench/render-steps.ts`: where a render's wall time goes, step by step, on the page set of
 * bench/peer-crawl4ai.ts (test/fixtures/browser/completeness.ts with an article's text, every page
 * twice a run), and the floor that page set puts under pages/s.
 *
 * 1. In this process, on a pool of its own (the engine's defaults, one account's reuse key): the median
 *    milliseconds of each step of `render` (engine/browser/render.ts `trace`): page (slot, browser,
 *    context and page, or the account's waiting one), gate (request rules, recorders), navigate (to
 *    DOMContentLoaded), load, settle (the pending-work probe, `wait`), read (the HTML over DevTools),
 *    release (recycling or closing the context, the slot), by kind of page, with and without `wait=300`.
 * 2. The render-host hop (engine/browser/share.ts): the same page rendered by the pool that hosts the
 *    browser and by a second pool that sends it over the socket, alternating; p50 of each.
 * 3. Through the whole service (`--http`): the API's p50 for a rendered page against the engine's p50
 *    here, and for a page fetched without rendering (what the API adds to any request).
 * 4. The floor: each page's least time (its navigation and load, plus the time its content needs after
 *    load or the `wait`), summed over a run and shared by `c` slots: the most pages/s any renderer that
 *    returns complete pages can reach on this set, against the peer's measured rate (`--peer=c:rate`).
 *
 *   npx tsx bench/render-steps.ts [--rounds=3] [--concurrency=2,4] [--http] [--peer=2:6.07,2w:3.79]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { processConfig } from '../base/config';
import { BrowserPool, findChromium, render } from '../engine/browser';
import type { RenderStep } from '../engine/browser/render';
import type { RenderRequest, RequestGuard } from '../engine/browser/types';
import { LATE_PAGES, PLAIN_PAGES, RESTLESS_PAGES, STILL_PAGES, startCompletenessSite } from '../test/fixtures/browser/completeness';
import { startBenchStack } from './crawl';

const { values } = parseArgs({ options: { rounds: { type: 'string' }, concurrency: { type: 'string' }, http: { type: 'boolean' }, peer: { type: 'string' } } });
const ROUNDS = Math.min(10, Math.max(1, Number(values.rounds ?? 3) || 3));
const CONCURRENCY = (values.concurrency ?? '2,4').split(',').map(Number).filter((n) => n >= 1 && n <= 16);
const STEPS: RenderStep[] = ['page', 'gate', 'navigate', 'load', 'settle', 'read', 'release'];
const KINDS = { late: Object.keys(LATE_PAGES), restless: Object.keys(RESTLESS_PAGES), still: Object.keys(STILL_PAGES), plain: Object.keys(PLAIN_PAGES) };
const NAMES = Object.values(KINDS).flat();
const RUN = [...NAMES, ...NAMES];
/** When each late page's content arrives after load (the fixtures' own delays); the long poll is let go at 1.5 s. */
const CONTENT_MS: Record<string, number> = { 'timer-100': 100, 'timer-500': 500, 'timer-1500': 1_500, fetch: 300, chain: 500, scheduler: 150, hydrate: 200, longpoll: 1_500 };

const guard: RequestGuard = async (url) =>
  ['http:', 'https:'].includes(url.protocol) && url.hostname === '127.0.0.1' ? { allowed: true } : { allowed: false, reason: 'not the bench site' };
const load = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const median = (list: number[]): number => {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : (sorted[Math.floor(sorted.length / 2)] as number);
};
const ms = (value: number): string => (Number.isNaN(value) ? '–' : value.toFixed(1));

async function runAll<T>(items: T[], concurrency: number, one: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(Array.from({ length: concurrency }, async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await one(item);
  }));
}

interface Timed {
  name: string;
  steps: Partial<Record<RenderStep, number>>;
  total: number;
}

async function timed(pool: BrowserPool, request: RenderRequest): Promise<Timed> {
  const steps: Partial<Record<RenderStep, number>> = {};
  const began = performance.now();
  const result = await render(request, { pool, guard, trace: (step, spent) => (steps[step] = (steps[step] ?? 0) + spent) });
  if (!result.ok) throw new Error(`${request.url}: ${result.error.kind} ${result.error.detail}`);
  return { name: new URL(request.url).pathname.slice(1), steps, total: performance.now() - began };
}

const newPool = (share?: string): BrowserPool =>
  new BrowserPool({
    executablePath: findChromium(processConfig().chromiumPath),
    maxPages: 8,
    retireAfterPages: 10_000,
    ...(share ? { share: { dataDir: share } } : {}),
  });

async function main(): Promise<void> {
  const site = await startCompletenessSite();
  const at = (name: string): string => `${site.at(name)}?article`;
  const pool = newPool();
  const shared = mkdtempSync(path.join(os.tmpdir(), 'fetchplane-steps-'));
  try {
    console.log(`# bench/render-steps.ts: ${RUN.length} renders a run (${NAMES.length} pages twice), ${ROUNDS} rounds, concurrency ${CONCURRENCY.join(', ')}; load average ${load()}\n`);
    await timed(pool, { url: at('nothing'), reuseKey: 'bench' });
    const rates = new Map<string, number[]>();
    const all = new Map<string, Timed[]>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const concurrency of CONCURRENCY) {
        for (const wait of [0, 300]) {
          const key = `c=${concurrency}${wait ? ' wait 300' : ''}`;
          const list = all.get(key) ?? [];
          all.set(key, list);
          const started = performance.now();
          await runAll(RUN, concurrency, async (name) => void list.push(await timed(pool, { url: at(name), reuseKey: 'bench', ...(wait ? { wait } : {}) })));
          const rate = RUN.length / ((performance.now() - started) / 1000);
          rates.set(key, [...(rates.get(key) ?? []), rate]);
          console.log(`round ${round + 1} ${key}: ${rate.toFixed(2)} pages/s; load average ${load()}`);
        }
      }
    }

    console.log('\n## 1. Median ms per step, in this process (engine only, no HTTP)\n');
    console.log(`| run | pages | ${STEPS.join(' | ')} | total | sum of step medians |`);
    console.log(`|---|---|${STEPS.map(() => '---|').join('')}---|---|`);
    for (const [key, list] of all) {
      for (const [kind, names] of [['all', NAMES], ...Object.entries(KINDS)] as Array<[string, string[]]>) {
        const chosen = list.filter((entry) => names.includes(entry.name));
        const medians = STEPS.map((step) => median(chosen.map((entry) => entry.steps[step] ?? 0)));
        console.log(`| ${key} | ${kind} (${chosen.length}) | ${medians.map(ms).join(' | ')} | ${ms(median(chosen.map((entry) => entry.total)))} | ${ms(medians.reduce((a, b) => a + b, 0))} |`);
      }
      const rateList = rates.get(key) ?? [];
      console.log(`| ${key} | pages/s ${(rateList.reduce((a, b) => a + b, 0) / rateList.length).toFixed(2)} (${rateList.map((rate) => rate.toFixed(2)).join(', ')}) |`);
    }

    // 4. The floor: the least time of a page is its navigation and load plus what its content needs
    // after load (or the wait); `c` slots share the run's sum, and no run is shorter than its longest page.
    console.log('\n## 4. The floor on this page set\n');
    const c2 = all.get('c=2') ?? [...all.values()][0] ?? [];
    const toLoad = median(c2.map((entry) => (entry.steps.navigate ?? 0) + (entry.steps.load ?? 0)));
    const overhead = median(c2.map((entry) => (entry.steps.page ?? 0) + (entry.steps.gate ?? 0) + (entry.steps.read ?? 0) + (entry.steps.release ?? 0)));
    console.log(`median navigation to load: ${ms(toLoad)} ms; median of the other steps (page, gate, read, release): ${ms(overhead)} ms`);
    const peers = new Map((values.peer ?? '').split(',').filter(Boolean).map((pair) => pair.split(':') as [string, string]));
    for (const concurrency of CONCURRENCY) {
      for (const wait of [0, 300]) {
        const after = RUN.map((name) => Math.max(wait, CONTENT_MS[name] ?? 0) / 1000);
        for (const [label, extra] of [['content and wait only', 0], ['+ navigation to load', toLoad / 1000], ['+ all measured steps', (toLoad + overhead) / 1000]] as Array<[string, number]>) {
          const sum = after.reduce((total, seconds) => total + seconds + extra, 0);
          const seconds = Math.max(sum / concurrency, Math.max(...after) + extra);
          const bound = RUN.length / seconds;
          const peer = Number(peers.get(`${concurrency}${wait ? 'w' : ''}`));
          console.log(
            `c=${concurrency}${wait ? ' wait 300' : ' defaults'}, ${label}: ≥ ${seconds.toFixed(2)} s a run → ≤ ${bound.toFixed(2)} pages/s` +
              (peer ? `; peer ${peer.toFixed(2)} → ratio ≤ ${(bound / peer).toFixed(2)}` : ''),
          );
        }
      }
    }

    // 2. The render-host hop: a second pool in this process sends its renders to the first over the socket.
    console.log('\n## 2. The render-host hop (share.ts), p50 of 40 renders each, alternating\n');
    const host = newPool(shared);
    const client = newPool(shared);
    try {
      await timed(host, { url: at('nothing'), reuseKey: 'hop' });
      await timed(client, { url: at('nothing'), reuseKey: 'hop' });
      const direct: number[] = [];
      const hopped: number[] = [];
      for (let index = 0; index < 40; index++) {
        const order = index % 2 === 0 ? [host, client] : [client, host];
        for (const which of order) (which === host ? direct : hopped).push((await timed(which, { url: at('nothing'), reuseKey: 'hop' })).total);
      }
      console.log(`host p50 ${ms(median(direct))} ms, over the socket p50 ${ms(median(hopped))} ms: the hop adds ${ms(median(hopped) - median(direct))} ms; load average ${load()}`);
    } finally {
      await client.close();
      await host.close();
    }

    if (values.http) {
      console.log('\n## 3. Through the whole service (HTTP, auth, billing, persistence), p50 of 40 each, alternating\n');
      const bench = await startBenchStack({ FREE_PLAN_CONCURRENCY: '8', MONGODB_DATABASE: 'fetchplane_steps_bench', TEMPORAL_TASK_QUEUE: 'fetchplane-steps-bench' });
      try {
        const get = async (query: Record<string, string>): Promise<number> => {
          const began = performance.now();
          const response = await fetch(`${bench.api}/v1/?${new URLSearchParams({ apikey: bench.key, ...query }).toString()}`);
          await response.text();
          if (response.status !== 200) throw new Error(`${response.status}`);
          return performance.now() - began;
        };
        await get({ url: at('nothing'), js_render: 'true' });
        const api: number[] = [];
        const engine: number[] = [];
        const plain: number[] = [];
        for (let index = 0; index < 40; index++) {
          api.push(await get({ url: at('nothing'), js_render: 'true' }));
          engine.push((await timed(pool, { url: at('nothing'), reuseKey: 'bench' })).total);
          plain.push(await get({ url: at('nothing') }));
        }
        console.log(`rendered: API p50 ${ms(median(api))} ms, engine alone p50 ${ms(median(engine))} ms → HTTP and API add ${ms(median(api) - median(engine))} ms`);
        console.log(`not rendered: API p50 ${ms(median(plain))} ms (the API's cost of any request, the fetch included); load average ${load()}`);
      } finally {
        await bench.close();
      }
    }
  } finally {
    await pool.close();
    rmSync(shared, { recursive: true, force: true });
    await site.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
