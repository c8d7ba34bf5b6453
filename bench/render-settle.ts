/**
 * `npx tsx bench/render-settle.ts`: what waiting for scripts costs and brings, and the memory of the
 * browser pool, in one run (engine level, `render()` as the API and the worker call it).
 *
 * 1. Completeness: the late pages of test/fixtures/browser/completeness.ts (content added 100 ms to
 *    1.5 s after load by timers, fetches, request chains, hydration) and the restless ones (long poll,
 *    beacon loop, animation, infinite scroll), rendered with the settle rule and with the old rule
 *    (the page taken at load: cap 0), alternating: the share of late content captured (goal 100%),
 *    pages per second of each (the cost of completeness), and how each ended (`quiet`/`cap`).
 * 2. Memory: the proportional set size (PSS, pages shared between processes counted once, from
 *    /proc/<pid>/smaps_rollup) of this process and every Chromium process, peak over a 60-page rendered
 *    run at concurrency 2 and 4, for the pool against one Playwright Chromium with a fresh context per
 *    page (goal ≤ 1.2×); then the pool's Chromium processes and PSS `--idle-seconds` (default 120)
 *    after the run with BROWSER_IDLE_CLOSE_MS at its default (goal: no Chromium).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { processConfig } from '../core/config';
import { BrowserPool, findChromium, render, type RenderRequest } from '../engine/browser';
import { LATE_PAGES, RESTLESS_PAGES, startCompletenessSite } from '../test/fixtures/browser/completeness';
import { FIXTURE_HOSTS, testGuard } from '../test/fixtures/browser/harness';

const arg = (name: string, fallback: number): number => {
  const raw = process.argv.find((item) => item.startsWith(`--${name}=`))?.split('=')[1];
  return raw ? Math.max(0, Number(raw)) : fallback;
};
const ROUNDS = arg('rounds', 3);
const PAGES = arg('pages', 60);
const IDLE_SECONDS = arg('idle-seconds', 120);
const executablePath = findChromium(processConfig().chromiumPath);
const guard = testGuard();
const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

function pss(pid: number): number {
  try {
    const match = /^Pss:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Chromium processes descending from this process (what the pool or Playwright launched). */
function chromiumPids(): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // gone
    }
  }
  const found: number[] = [];
  const queue = [...(children.get(process.pid) ?? [])];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    found.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return found;
}

const totalPss = (): number => pss(process.pid) + chromiumPids().reduce((sum, pid) => sum + pss(pid), 0);

async function withPeak<T>(work: () => Promise<T>): Promise<{ result: T; peak: number }> {
  let peak = totalPss();
  const timer = setInterval(() => {
    peak = Math.max(peak, totalPss());
  }, 100);
  try {
    const result = await work();
    return { result, peak: Math.max(peak, totalPss()) };
  } finally {
    clearInterval(timer);
  }
}

async function runAll(urls: string[], concurrency: number, one: (url: string) => Promise<void>): Promise<void> {
  const queue = [...urls];
  await Promise.all(Array.from({ length: concurrency }, async () => {
    for (let url = queue.shift(); url !== undefined; url = queue.shift()) await one(url);
  }));
}

async function main(): Promise<void> {
  const site = await startCompletenessSite();
  const late = Object.keys(LATE_PAGES);
  const restless = Object.keys(RESTLESS_PAGES);
  const pool = new BrowserPool({ executablePath, maxPages: 4, retireAfterPages: 1_000, hostOverrides: FIXTURE_HOSTS, idleCloseMs: 0 });
  try {
    const sides = {
      settle: { limits: {}, captured: 0, total: 0, seconds: 0, pages: 0, ended: new Map<string, number>() },
      load: { limits: { settleCapMs: 0 }, captured: 0, total: 0, seconds: 0, pages: 0, ended: new Map<string, number>() },
    };
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of round % 2 === 0 ? [sides.settle, sides.load] : [sides.load, sides.settle]) {
        const started = performance.now();
        for (const name of [...late, ...restless]) {
          const result = await render({ url: site.at(name) } as RenderRequest, { pool, guard, limits: side.limits });
          if (!result.ok) throw new Error(`${name}: ${result.error.detail}`);
          side.pages++;
          side.ended.set(`${name}:${result.settledBy}`, (side.ended.get(`${name}:${result.settledBy}`) ?? 0) + 1);
          if (late.includes(name)) {
            side.total++;
            if (result.html.includes(`LATE:${name}`)) side.captured++;
          }
        }
        side.seconds += (performance.now() - started) / 1000;
      }
    }
    console.log('| rule | late content captured | pages/s | ended by |');
    console.log('|---|---|---|---|');
    for (const [name, side] of Object.entries(sides)) {
      const ended = [...side.ended].map(([key, count]) => `${key}×${count}`).join(' ');
      console.log(`| ${name === 'settle' ? 'quiet window (new)' : 'at load (old)'} | ${side.captured}/${side.total} (${((100 * side.captured) / side.total).toFixed(0)}%) | ${(side.pages / side.seconds).toFixed(2)} | ${ended} |`);
    }
    console.log(`pages/s new/old: ${(sides.settle.pages / sides.settle.seconds / (sides.load.pages / sides.load.seconds)).toFixed(2)} (the cost of completeness)\n`);
  } finally {
    await pool.close();
  }

  const urls = Array.from({ length: PAGES }, (_, index) => site.at(late[index % late.length]!));
  console.log('| concurrency | pool peak PSS | one Chromium, context per page | ratio (goal ≤ 1.2) |');
  console.log('|---|---|---|---|');
  let idlePool: BrowserPool | undefined;
  for (const concurrency of [2, 4]) {
    const baseline = await withPeak(async () => {
      const browser = await chromium.launch({ executablePath, args: ['--host-resolver-rules=MAP *.fixture.test 127.0.0.1'] });
      try {
        await runAll(urls, concurrency, async (url) => {
          const context = await browser.newContext();
          const page = await context.newPage();
          await page.goto(url, { waitUntil: 'load' });
          await page.content();
          await context.close();
        });
      } finally {
        await browser.close();
      }
    });
    const measuredPool = new BrowserPool({ executablePath, maxPages: concurrency, retireAfterPages: 1_000, hostOverrides: FIXTURE_HOSTS, idleCloseMs: processConfig().browserIdleCloseMs });
    const ours = await withPeak(() =>
      runAll(urls, concurrency, async (url) => {
        const result = await render({ url, reuseKey: 'bench' } as RenderRequest, { pool: measuredPool, guard });
        if (!result.ok) throw new Error(result.error.detail);
      }),
    );
    console.log(`| ${concurrency} | ${mb(ours.peak)} | ${mb(baseline.peak)} | ${(ours.peak / baseline.peak).toFixed(2)} |`);
    if (concurrency === 4) idlePool = measuredPool;
    else await measuredPool.close();
  }
  if (idlePool) {
    console.log(`\nright after the run: ${idlePool.processIds().length} Chromium processes, ${mb(totalPss())} PSS`);
    await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
    console.log(`${IDLE_SECONDS} s idle (BROWSER_IDLE_CLOSE_MS ${processConfig().browserIdleCloseMs}): ${idlePool.processIds().length} Chromium processes of the pool, ${chromiumPids().length} child processes, ${mb(totalPss())} PSS`);
    await idlePool.close();
  }
  await site.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
