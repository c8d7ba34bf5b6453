/**
 * The "spinning renders" phase of bench/fairness.ts (`--kinds spinning-renders`): another tenant's
 * plain Fetch (at `--spin-rate`/s) and rendered Fetch (`--spin-render-concurrency` at a time, one after
 * the other) alone, then beside a free account keeping five renders in flight of a page whose script
 * never yields, in alternating rounds (`--spin-rounds` of `--spin-seconds` each side), so both sides see
 * the same machine. The abuser's renders are cancelled at the end of each of its rounds, so a round
 * shorter than the render deadline never counts them against its `deadline_renders`: what is measured
 * is its share of the pages, at its worst. Printed: p50/p99 of each kind alone and beside, their ratios
 * (goals: p50 ≤ 1.5×, p99 ≤ 3×), the abuser's answers by status and the most of its pages the site
 * saw at once.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SpinningOptions {
  api: string;
  /** Keys made for the phase: `other` is the tenant measured (a business-plan account), `abuser` a free one. */
  keys: { other: string; abuser: string };
  seconds: number;
  rounds: number;
  /** The other tenant's plain Fetch requests per second. */
  rate: number;
  /** The other tenant's renders in flight at once. */
  renderConcurrency: number;
}

const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
};
const ms = (value: number): string => `${value.toFixed(1)} ms`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The phase's own site: `steady.fixture.test` for the tenant, `spin.fixture.test` for the abuser (separate hosts at the host gate). */
async function startSite() {
  const seen = { spinning: 0, mostSpinning: 0 };
  const server = http.createServer((req, res) => {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    if ((req.url ?? '').startsWith('/spin')) {
      // Never ends, so the connection is open exactly while a page holds it; the script never yields.
      seen.spinning++;
      seen.mostSpinning = Math.max(seen.mostSpinning, seen.spinning);
      res.on('close', () => seen.spinning--);
      return void res.write('<!doctype html><html><head><script>for (;;) {}</script></head><body>never');
    }
    res.end('<!doctype html><html><head><title>Steady</title></head><body><h1>A steady page</h1><p>Some text.</p><script>document.body.insertAdjacentHTML("beforeend", "<p>Late</p>")</script></body></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    seen,
    steady: `http://steady.fixture.test:${port}/steady`,
    spin: (n: number) => `http://spin.fixture.test:${port}/spin?n=${n}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function spinningRenders(options: SpinningOptions): Promise<string[]> {
  const site = await startSite();
  const fetchUrl = (key: string, params: Record<string, string>) => `${options.api}/v1/?${new URLSearchParams({ apikey: key, ...params }).toString()}`;
  const timed = async (params: Record<string, string>, signal?: AbortSignal): Promise<{ status: number; ms: number }> => {
    const t0 = performance.now();
    const response = await fetch(fetchUrl(options.keys.other, params), signal ? { signal } : {});
    await response.arrayBuffer();
    return { status: response.status, ms: performance.now() - t0 };
  };

  /** One side of a round: the tenant's plain Fetch at its rate and renders at their concurrency. */
  const side = async (): Promise<{ plain: number[]; rendered: number[]; failed: number }> => {
    const plain: number[] = [];
    const rendered: number[] = [];
    let failed = 0;
    const started = performance.now();
    const ends = started + options.seconds * 1000;
    const record = (into: number[]) => (outcome: { status: number; ms: number }) => (outcome.status === 200 ? into.push(outcome.ms) : failed++);
    const renders = Array.from({ length: options.renderConcurrency }, async () => {
      while (performance.now() < ends) await timed({ url: site.steady, js_render: 'true' }).then(record(rendered));
    });
    const pending: Array<Promise<unknown>> = [];
    for (let n = 0; ; n++) {
      const due = started + (n * 1000) / options.rate;
      if (due >= ends) break;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      pending.push(timed({ url: `${site.steady}?n=${n}` }).then(record(plain)));
    }
    await Promise.all([...pending, ...renders]);
    return { plain, rendered, failed };
  };

  /** Five renders of the spinning page in flight until stopped; each ended one is sent again. */
  const abuserStatuses = new Map<string, number>();
  const abuse = () => {
    const controller = new AbortController();
    let sent = 0;
    const loops = Array.from({ length: 5 }, async () => {
      while (!controller.signal.aborted) {
        try {
          const response = await fetch(fetchUrl(options.keys.abuser, { url: site.spin(sent++), js_render: 'true' }), { signal: controller.signal });
          const body = await response.text();
          const code = response.status === 200 ? '' : ` ${(JSON.parse(body) as { code?: string }).code ?? ''}`;
          abuserStatuses.set(`${response.status}${code}`, (abuserStatuses.get(`${response.status}${code}`) ?? 0) + 1);
          // A refused account is not let to spin the CPU of this process either.
          if (response.status === 429) await sleep(Number(response.headers.get('retry-after') ?? 1) * 1000).catch(() => undefined);
        } catch {
          // Cancelled at the end of the round.
        }
      }
    });
    return async () => {
      controller.abort();
      await Promise.all(loops);
    };
  };

  // Warm-up: the browser launched, the tenant's context made, the spinning page seen once.
  for (let n = 0; n < 3; n++) await timed({ url: site.steady, js_render: 'true' });
  const stopWarm = abuse();
  await sleep(3_000);
  await stopWarm();
  abuserStatuses.clear();
  site.seen.mostSpinning = 0;

  const alone = { plain: [] as number[], rendered: [] as number[], failed: 0 };
  const beside = { plain: [] as number[], rendered: [] as number[], failed: 0 };
  const byRound: string[] = [];
  for (let round = 0; round < options.rounds; round++) {
    const quiet = await side();
    const stop = abuse();
    // The abuser's renders hold their pages before the tenant's side starts.
    for (let wait = 0; wait < 100 && site.seen.spinning < 2; wait++) await sleep(100);
    const busy = await side();
    await stop();
    for (const [into, from] of [
      [alone, quiet],
      [beside, busy],
    ] as const) {
      into.plain.push(...from.plain);
      into.rendered.push(...from.rendered);
      into.failed += from.failed;
    }
    byRound.push(`render p50 ${(quantile(busy.rendered, 0.5) / quantile(quiet.rendered, 0.5)).toFixed(2)}x`);
  }
  await site.close();

  const p50 = (values: number[]) => quantile(values, 0.5);
  const p99 = (values: number[]) => quantile(values, 0.99);
  const line = (name: string, a: number[], b: number[]) =>
    `  ${name}: alone p50 ${ms(p50(a))}, p99 ${ms(p99(a))} (${a.length}); beside p50 ${ms(p50(b))}, p99 ${ms(p99(b))} (${b.length}); ratio p50 ${(p50(b) / p50(a)).toFixed(2)}x, p99 ${(p99(b) / p99(a)).toFixed(2)}x`;
  return [
    `Spinning renders: another tenant alone, then beside a free account's five renders of a page that never yields, ${options.rounds} rounds of ${options.seconds} s each side (goals: p50 ≤ 1.5x, p99 ≤ 3x):`,
    line(`plain Fetch at ${options.rate}/s`, alone.plain, beside.plain),
    line(`rendered Fetch, ${options.renderConcurrency} at a time`, alone.rendered, beside.rendered),
    `  the tenant's answers other than 200: ${alone.failed} alone, ${beside.failed} beside; by round: ${byRound.join(', ')}`,
    `  the abuser's answers: ${[...abuserStatuses].map(([status, n]) => `${status}: ${n}`).join(', ') || 'none ended (each held to the end of its round)'}; its pages at the site at once, at most: ${site.seen.mostSpinning}`,
  ];
}
