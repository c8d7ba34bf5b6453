/**
 * Soak: 1,000 rendered requests through one pool, two at a time, over a rotation of local pages.
 * Memory (this process plus every Chromium process of the pool, resident, from /proc) after the first
 * 100 must be within 20% of memory at the end; after `close()` no Chromium process may be left.
 *
 *   npx tsx bench/render-soak.ts [--requests=1000] [--concurrency=2] [--retire-after=200]
 *
 * Memory is sampled every 250 ms while pages render; "after the first 100" is the median of the samples
 * taken while requests 100 to 150 ran, "at the end" the median over the last 50, so one renderer
 * starting or exiting at the sampling instant does not decide the verdict. Browsers are retired every `--retire-after` pages
 * (BROWSER_RETIRE_AFTER_PAGES's default), so the soak also runs through several browser replacements.
 * Three accounts' requests take turns on recycled contexts (engine/browser/pool.ts), the rest get fresh
 * ones, so contexts are reused, evicted and closed with their browsers all along.
 */
import { processConfig } from '../base/config';
import { BrowserPool, findChromium, render, type RenderRequest } from '../engine/browser';
import { markedProcesses, residentBytes } from '../engine/browser/processes';
import { FIXTURE_HOSTS, testGuard } from '../test/fixtures/browser/harness';
import { startBrowserSite, startPrivateListener } from '../test/fixtures/browser/site';

const arg = (name: string, fallback: number): number => {
  const raw = process.argv.find((item) => item.startsWith(`--${name}=`))?.split('=')[1];
  return raw ? Math.max(1, Number(raw)) : fallback;
};

const REQUESTS = arg('requests', 1_000);
const CONCURRENCY = arg('concurrency', 2);
const RETIRE_AFTER = arg('retire-after', 200);
const FIRST = Math.min(100, REQUESTS);
/** Requests over which each memory figure is taken. */
const WINDOW = Math.max(1, Math.min(50, Math.floor(REQUESTS / 10)));

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

async function main(): Promise<void> {
  const privateListener = await startPrivateListener();
  const site = await startBrowserSite(privateListener.origin);
  const pool = new BrowserPool({
    executablePath: findChromium(processConfig().chromiumPath),
    maxPages: CONCURRENCY,
    retireAfterPages: RETIRE_AFTER,
    hostOverrides: FIXTURE_HOSTS,
  });
  const guard = testGuard();
  const pages: RenderRequest[] = [
    { url: site.at('/dynamic') },
    { url: site.at('/xhr'), captureXhr: true },
    { url: site.at('/form') },
    { url: site.at('/scroll') },
    { url: site.at('/frames') },
    { url: site.at('/click') },
    { url: site.at('/box'), screenshot: { area: 'viewport', format: 'jpeg', quality: 60 }, windowWidth: 800, windowHeight: 600 },
  ];
  const marks = new Set<string>();
  let done = 0;
  let failed = 0;
  // Memory is sampled all along; each window's figure is the median of its samples.
  const samples: Array<{ done: number; node: number; chromium: number }> = [];
  const sampler = setInterval(() => {
    for (const mark of pool.browserMarks()) marks.add(mark);
    const chromium = residentBytes(markedProcesses(new Set(pool.browserMarks())).map(({ pid }) => pid));
    samples.push({ done, node: process.memoryUsage().rss, chromium });
  }, 250);
  let next = 0;
  const started = Date.now();
  const worker = async (): Promise<void> => {
    while (next < REQUESTS) {
      const index = next++;
      // Three accounts taking turns on recycled contexts (pool.ts), and requests without one.
      const reuseKey = ['account-1', 'account-2', 'account-3', undefined][index % 4];
      const request = pages[index % pages.length] as RenderRequest;
      const result = await render(reuseKey ? { ...request, reuseKey } : request, { pool, guard });
      if (!result.ok) failed++;
      done++;
      if (done % 100 === 0) console.log(`  ${done} requests, ${((Date.now() - started) / 1000).toFixed(0)} s, ${pool.launched} browsers launched`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  clearInterval(sampler);
  const seconds = (Date.now() - started) / 1000;
  const window = (from: number, to: number): { node: number; chromium: number; total: number } => {
    const inside = samples.filter((sample) => sample.done >= from && sample.done < to);
    const median = (values: number[]): number => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
    const node = median(inside.map((sample) => sample.node));
    const chromium = median(inside.map((sample) => sample.chromium));
    return { node, chromium, total: node + chromium };
  };
  const atFirst = window(FIRST, FIRST + WINDOW);
  const atEnd = window(REQUESTS - WINDOW, REQUESTS);
  await pool.close();
  await new Promise((resolve) => setTimeout(resolve, 200));
  const left = markedProcesses(marks);
  await site.close();
  await privateListener.close();

  const growth = atEnd.total / atFirst.total - 1;
  console.log(`render soak: ${REQUESTS} requests (${failed} failed), ${CONCURRENCY} at a time, ${seconds.toFixed(0)} s, ${(REQUESTS / seconds).toFixed(2)} pages/s`);
  console.log(`browsers launched: ${pool.launched} (retired every ${RETIRE_AFTER} pages)`);
  console.log(`after ${FIRST} (median over the next ${WINDOW}): node ${mb(atFirst.node)} + chromium ${mb(atFirst.chromium)} = ${mb(atFirst.total)}`);
  console.log(`at the end (median over the last ${WINDOW}): node ${mb(atEnd.node)} + chromium ${mb(atEnd.chromium)} = ${mb(atEnd.total)}`);
  console.log(`growth: ${(growth * 100).toFixed(1)}% (limit 20%) ${growth <= 0.2 ? 'OK' : 'OVER LIMIT'}`);
  console.log(`Chromium processes left after close: ${left.length} ${left.length === 0 ? 'OK' : left.map(({ pid }) => pid).join(' ')}`);
  if (growth > 0.2 || left.length > 0 || failed > 0) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
