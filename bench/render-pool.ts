/**
 * Engine level (bench/render.ts measures the whole service). Rendered pages per second through the
 * browser pool, against launching a browser for each request,
 * on the same local pages in the same run, with the peak memory of this process and of Chromium (the
 * resident memory of every Chromium process summed, from /proc: pages shared between processes, the
 * browser's code for one, count in each) and the CPU time per rendered page.
 *
 *   npx tsx bench/render-pool.ts [--pages=60] [--concurrency=2]   (CHROMIUM_PATH picks the browser)
 *
 * Both sides go through `render()` with the same request gate and settings; the baseline gets a fresh
 * one-page pool per request (launch, render, close and wait for its processes to be gone), which is
 * what rendering without a pool costs. Goal: the pool ≥ 5× the baseline.
 *
 * CPU counts this process and every process of the browsers: the main process, zygotes, renderers, GPU
 * and network service (found by session, see engine/browser/processes.ts; before, only the main
 * process was seen, about half of the real figure), and is shown by kind of process as well. Checked against the rusage of a child subreaper
 * over the same work: exact for the pool; the baseline loses what its helpers use in their last
 * ≤100 ms as the browser closes (about 8% of its figure), so its CPU per page reads a little low.
 */
import { processConfig } from '../base/config';
import { BrowserPool, findChromium, render, type RenderRequest } from '../engine/browser';
import { CpuMeter, markedProcesses, residentBytes } from '../engine/browser/processes';
import { FIXTURE_HOSTS, testGuard } from '../test/fixtures/browser/harness';
import { startBrowserSite, startPrivateListener, type BrowserSite } from '../test/fixtures/browser/site';

const arg = (name: string, fallback: number): number => {
  const raw = process.argv.find((item) => item.startsWith(`--${name}=`))?.split('=')[1];
  return raw ? Math.max(1, Number(raw)) : fallback;
};

const PAGES = arg('pages', 60);
const CONCURRENCY = arg('concurrency', 2);
const executablePath = findChromium(processConfig().chromiumPath);
const guard = testGuard();

/** The same rotation of local pages for both sides. */
const requests = (site: BrowserSite): RenderRequest[] =>
  ['/dynamic', '/click', '/form', '/xhr', '/scroll', '/resources', '/frames', '/late'].map((path) => ({ url: site.at(path) }));

const newPool = (maxPages: number): BrowserPool =>
  new BrowserPool({ executablePath, maxPages, retireAfterPages: 1_000, hostOverrides: FIXTURE_HOSTS });

/**
 * Samples memory and CPU every 100 ms while `work` runs. Chromium's processes are found by the pools'
 * marks and sessions (all helpers: renderers, GPU, network service); CPU counts this process and every
 * Chromium process, less what the sampling itself costs here.
 */
async function measured<T>(
  marks: () => ReadonlySet<string>,
  work: () => Promise<T>,
): Promise<{ result: T; seconds: number; nodePeak: number; chromiumPeak: number; cpu: number; kinds: Record<string, number> }> {
  let nodePeak = 0;
  let chromiumPeak = 0;
  let samplingCpu = 0;
  const meter = new CpuMeter(marks);
  const sample = (): void => {
    const before = process.cpuUsage();
    nodePeak = Math.max(nodePeak, process.memoryUsage().rss);
    chromiumPeak = Math.max(chromiumPeak, residentBytes(meter.sample().map(({ pid }) => pid)));
    const spent = process.cpuUsage(before);
    samplingCpu += (spent.user + spent.system) / 1e6;
  };
  const timer = setInterval(sample, 100);
  const started = process.hrtime.bigint();
  const nodeCpu = process.cpuUsage();
  try {
    const result = await work();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    sample();
    const own = process.cpuUsage(nodeCpu);
    const kinds = { node: (own.user + own.system) / 1e6 - samplingCpu, ...meter.byKind() };
    const cpu = Object.values(kinds).reduce((sum, value) => sum + value, 0);
    return { result, seconds, nodePeak, chromiumPeak, cpu, kinds };
  } finally {
    clearInterval(timer);
  }
}

/** Runs `count` renders, `CONCURRENCY` at a time; returns how many succeeded. */
async function run(count: number, renderOne: (request: RenderRequest) => Promise<boolean>, pages: RenderRequest[]): Promise<number> {
  let next = 0;
  let ok = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const request = pages[next++ % pages.length] as RenderRequest;
      if (await renderOne(request)) ok++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return ok;
}

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

async function main(): Promise<void> {
  const privateListener = await startPrivateListener();
  const site = await startBrowserSite(privateListener.origin);
  const pages = requests(site);
  try {
    // Baseline: a browser launched (and fully closed) per request.
    const perRequestMarks = new Set<string>();
    const live = new Set<BrowserPool>();
    const perRequest = await measured(
      () => new Set([...live].flatMap((pool) => pool.browserMarks())),
      () =>
        run(
          PAGES,
          async (request) => {
            const pool = newPool(1);
            live.add(pool);
            try {
              return (await render(request, { pool, guard })).ok;
            } finally {
              for (const mark of pool.browserMarks()) perRequestMarks.add(mark);
              await pool.close();
              live.delete(pool);
            }
          },
          pages,
        ),
    );

    // The pool as requests of many accounts meet it (a fresh context each), then as one account's
    // requests do (a crawl, say), which take turns on contexts cleared in between (pool.ts).
    const pooledSide = async (reuseKey: string | undefined) => {
      const pool = newPool(CONCURRENCY);
      const side = await measured(
        () => new Set(pool.browserMarks()),
        () => run(PAGES, async (request) => (await render({ ...request, ...(reuseKey ? { reuseKey } : {}) }, { pool, guard })).ok, pages),
      );
      const marks = pool.browserMarks();
      const reuse = pool.reuse;
      await pool.close();
      return { side, marks, reuse };
    };
    const fresh = await pooledSide(undefined);
    const reused = await pooledSide('one-account');
    const pooled = reused.side;
    const poolMarks = [...fresh.marks, ...reused.marks];

    const rate = (side: { result: number; seconds: number }): number => side.result / side.seconds;
    console.log(`render: ${PAGES} local pages per side, ${CONCURRENCY} at a time, Chromium ${executablePath}`);
    console.log('side                      ok   seconds  pages/s  peak node  peak chromium  CPU s/page');
    const sides = [
      ['browser per request', perRequest],
      ['pool, fresh contexts', fresh.side],
      ['pool, one account', pooled],
    ] as const;
    for (const [name, side] of sides) {
      console.log(
        `${name.padEnd(23)} ${String(side.result).padStart(4)} ${side.seconds.toFixed(1).padStart(9)} ${rate(side).toFixed(2).padStart(8)} ${mb(side.nodePeak).padStart(10)} ${mb(side.chromiumPeak).padStart(14)} ${(side.cpu / side.result).toFixed(2).padStart(11)}`,
      );
    }
    for (const [name, side] of sides) {
      const parts = Object.entries(side.kinds)
        .filter(([, seconds]) => Math.abs(seconds) >= 0.0005 * side.result)
        .sort((a, b) => b[1] - a[1])
        .map(([kind, seconds]) => `${kind} ${((seconds / side.result) * 1000).toFixed(0)}`);
      console.log(`CPU ms per page, ${name}: ${parts.join(', ')}`);
    }
    console.log(`contexts reused (one account): ${reused.reuse.reused} of ${PAGES} renders`);
    console.log(`pool with fresh contexts / per request: ${(rate(fresh.side) / rate(perRequest)).toFixed(1)}x`);
    const ratio = rate(pooled) / rate(perRequest);
    console.log(`pool / per request: ${ratio.toFixed(1)}x (goal >= 5x) ${ratio >= 5 ? 'OK' : 'BELOW GOAL'}`);
    // On a shared machine wall time follows everyone's load; CPU per page (node + Chromium) does not.
    const cpuPerPage = (side: { cpu: number; result: number }): number => side.cpu / side.result;
    console.log(
      `CPU per page, per request / pool: ${(cpuPerPage(perRequest) / cpuPerPage(pooled)).toFixed(1)}x (fresh contexts ${(cpuPerPage(perRequest) / cpuPerPage(fresh.side)).toFixed(1)}x)`,
    );
    const left = markedProcesses(new Set([...perRequestMarks, ...poolMarks]));
    console.log(`Chromium processes left: ${left.length}`);
  } finally {
    await site.close();
    await privateListener.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
