/**
 * `npx tsx bench/peer-crawl4ai.ts`: rendered pages through the whole service (FerretDB, Temporal, the
 * worker and the API started as `npm start` does, on free ports) against Crawl4AI 0.9.5 (installed from
 * PyPI into a virtualenv in STACK_DIR on the first run; bench/peer-crawl4ai.py drives it), on the same
 * local pages (test/fixtures/browser/completeness.ts: content added by scripts up to 1.5 s after load,
 * pages that never go still, a page with nothing after load, plain articles, each with an article's
 * worth of text; every page twice a run) and
 * the same Chromium binary, at concurrency 2 and 4, in alternating rounds:
 *
 * - pages/s ours / peer with each side's defaults (`js_render=true`; Crawl4AI's `CrawlerRunConfig()`),
 *   and with both told to wait 300 ms (`wait=300`; `delay_before_return_html=0.3`): goal ≥ 2.0;
 * - a content checklist per page, both sides (one check a page: the text its scripts add, or that
 *   closes the article): goal ours ≥ peer and 100%;
 * - CPU per page (ours: the API, the worker and their Chromium, Temporal and FerretDB; peer: Python
 *   and its Chromium), measured from the first timed page to the last;
 * - peak PSS of our whole service (API and worker Node processes and their Chromium) against
 *   Crawl4AI's Python and Chromium during the same runs: goal ≤ 1.5×.
 *
 * The machine's load average is printed with each round (the machine may be shared).
 *
 *   npx tsx bench/peer-crawl4ai.ts [--rounds=3] [--concurrency=2,4] [--node-options=...]
 *
 * `--node-options` runs the API and the worker with those Node options (NODE_OPTIONS), on top of the
 * launcher's own, to measure settings of their V8 heaps against the same peer.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { childEnvironment, processConfig } from '../base/config';
import { findChromium } from '../engine/browser';
import { LATE_PAGES, PLAIN_PAGES, RESTLESS_PAGES, STILL_PAGES, startCompletenessSite } from '../test/fixtures/browser/completeness';
import { startBenchStack, type BenchStack } from './crawl';
import { mb, peakDuring, range, type Sample } from './render-measure';
import { processTree } from '../scripts/stack/proc';

const CRAWL4AI_VERSION = '0.9.5';
const { values } = parseArgs({ options: { rounds: { type: 'string' }, concurrency: { type: 'string' }, 'node-options': { type: 'string' } } });
const ROUNDS = Math.min(10, Math.max(1, Number(values.rounds ?? 3) || 3));
const CONCURRENCY = (values.concurrency ?? '2,4').split(',').map(Number).filter((n) => n >= 1 && n <= 16);

/** The virtualenv's python with crawl4ai installed (once; a marker file says it finished). */
function crawl4aiPython(): string {
  const venv = path.join(processConfig().stackDir, `crawl4ai-${CRAWL4AI_VERSION}`);
  const python = path.join(venv, 'bin', 'python');
  const marker = path.join(venv, '.installed');
  if (existsSync(marker)) return python;
  const run = (command: string, args: string[]): void => {
    const result = spawnSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed:\n${result.stdout}${result.stderr}`);
  };
  console.log(`installing crawl4ai ${CRAWL4AI_VERSION} into ${venv} …`);
  if (!existsSync(python)) run('python3', ['-m', 'venv', venv]);
  run(path.join(venv, 'bin', 'pip'), ['install', '--disable-pip-version-check', '-q', `crawl4ai==${CRAWL4AI_VERSION}`]);
  run(python, ['-c', `import pathlib, crawl4ai; pathlib.Path(${JSON.stringify(marker)}).write_text("ok")`]);
  return python;
}

/**
 * CPU seconds of the processes under `roots`, with what their exited children used (cutime, cstime):
 * renderers come and go during a run, and their CPU must not leave the sum with them.
 */
function cpuOf(roots: Array<number | undefined>): number {
  let ticks = 0;
  for (const pid of roots.flatMap((root) => (root === undefined ? [] : processTree(root)))) {
    try {
      const raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    } catch {
      // gone meanwhile
    }
  }
  return ticks / 100;
}

/** One check per page: the text that shows its content is complete. */
const CHECKS: Record<string, string> = {
  ...Object.fromEntries(Object.keys(LATE_PAGES).map((name) => [name, `LATE:${name}`])),
  ...Object.fromEntries(Object.keys(RESTLESS_PAGES).map((name) => [name, `EARLY:${name}`])),
  ...Object.fromEntries(Object.keys(STILL_PAGES).map((name) => [name, `EARLY:${name}`])),
  ...Object.fromEntries(Object.keys(PLAIN_PAGES).map((name) => [name, `END:${name}`])),
};
const NAMES = Object.keys(CHECKS);
/** 60 requests: every page twice. */
const RUN = [...NAMES, ...NAMES];

interface Outcome {
  seconds: number;
  cpu: number;
  peak: Sample;
  passed: Set<string>;
}

async function runAll<T>(items: T[], concurrency: number, one: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(Array.from({ length: concurrency }, async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await one(item);
  }));
}

async function ours(bench: BenchStack, at: (name: string) => string, concurrency: number, wait: boolean): Promise<Outcome> {
  const service = () => ({ api: [bench.stack.component('api').pid], worker: [bench.stack.component('worker').pid] });
  const everything = () => (['api', 'worker', 'temporal', 'ferretdb'] as const).map((name) => bench.stack.component(name).pid);
  const get = async (name: string): Promise<string> => {
    const query = new URLSearchParams({ apikey: bench.key, url: at(name), js_render: 'true', ...(wait ? { wait: '300' } : {}) });
    const response = await fetch(`${bench.api}/v1/?${query.toString()}`);
    const body = await response.text();
    if (response.status !== 200) throw new Error(`${name}: ${response.status} ${body.slice(0, 300)}`);
    return body;
  };
  await get(NAMES[0] as string); // the browser is up before the clock starts, as the peer's is
  const passed = new Set<string>();
  const cpu = cpuOf(everything());
  const started = performance.now();
  const { peak } = await peakDuring(service, () =>
    runAll(RUN, concurrency, async (name) => {
      if ((await get(name)).includes(CHECKS[name] as string)) passed.add(name);
    }),
  );
  return { seconds: (performance.now() - started) / 1000, cpu: cpuOf(everything()) - cpu, peak, passed };
}

async function peer(python: string, at: (name: string) => string, concurrency: number, wait: boolean): Promise<Outcome> {
  const script = path.join(__dirname, 'peer-crawl4ai.py');
  const child = spawn(python, [script], { stdio: ['pipe', 'pipe', 'pipe'], env: childEnvironment({ CRAWL4AI_TELEMETRY: '0' }) });
  let out = '';
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const line = (test: (text: string) => boolean): Promise<void> =>
    new Promise((resolve, reject) => {
      const look = (): void => {
        if (test(out)) {
          child.stdout.off('data', onData);
          child.off('exit', onExit);
          resolve();
        }
      };
      const onData = (chunk: Buffer): void => {
        out += chunk.toString();
        look();
      };
      const onExit = (code: number | null): void => reject(new Error(`crawl4ai exited ${String(code)}: ${err.slice(-3000)}`));
      child.stdout.on('data', onData);
      child.once('exit', onExit);
      look();
    });
  child.stdin.write(`${JSON.stringify({ urls: RUN.map(at), concurrency, delay: wait ? 0.3 : null, chromium: findChromium(processConfig().chromiumPath) })}\n`);
  try {
    await line((text) => /^ready$/m.test(text));
    const roots = () => ({ peer: [child.pid] });
    const cpu = cpuOf([child.pid]);
    let cpuEnd = 0;
    child.stdin.write('go\n');
    const { peak } = await peakDuring(roots, async () => {
      await line((text) => /^\{.*\}$/m.test(text));
      cpuEnd = cpuOf([child.pid]);
    });
    const answer = JSON.parse(/^\{.*\}$/m.exec(out)?.[0] ?? '{}') as { seconds: number; htmls: string[] };
    const passed = new Set<string>();
    answer.htmls.forEach((html, index) => {
      const name = RUN[index] as string;
      if (html.includes(CHECKS[name] as string)) passed.add(name);
    });
    return { seconds: answer.seconds, cpu: cpuEnd - cpu, peak, passed };
  } finally {
    child.stdin.end();
    await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve)));
  }
}

const load = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

async function main(): Promise<void> {
  const python = crawl4aiPython();
  const site = await startCompletenessSite();
  const bench = await startBenchStack({
    FREE_PLAN_CONCURRENCY: '8',
    MONGODB_DATABASE: 'fetchplane_peer_bench',
    TEMPORAL_TASK_QUEUE: 'fetchplane-peer-bench',
    ...(values['node-options'] ? { NODE_OPTIONS: values['node-options'] } : {}),
  });
  const at = (name: string): string => `${site.at(name)}?article`;
  type Key = `${number} ${'defaults' | 'wait 300'}`;
  const results = new Map<Key, { ours: Outcome[]; peer: Outcome[] }>();
  try {
    console.log(`# bench/peer-crawl4ai.ts: ${RUN.length} pages a run (${NAMES.length} pages twice), Chromium ${findChromium(processConfig().chromiumPath)}, ${ROUNDS} rounds, alternating\n`);
    for (let round = 0; round < ROUNDS; round++) {
      for (const concurrency of CONCURRENCY) {
        for (const wait of [false, true]) {
          const key: Key = `${concurrency} ${wait ? 'wait 300' : 'defaults'}`;
          const entry = results.get(key) ?? { ours: [], peer: [] };
          results.set(key, entry);
          const before = load();
          const sides = [async () => entry.ours.push(await ours(bench, at, concurrency, wait)), async () => entry.peer.push(await peer(python, at, concurrency, wait))];
          for (const side of round % 2 === 0 ? sides : sides.reverse()) await side();
          const a = entry.ours.at(-1) as Outcome;
          const b = entry.peer.at(-1) as Outcome;
          console.log(
            `round ${round + 1} c=${key}: ours ${(RUN.length / a.seconds).toFixed(2)} pages/s, peer ${(RUN.length / b.seconds).toFixed(2)}, ratio ${(b.seconds / a.seconds).toFixed(2)}; ` +
              `checks ${a.passed.size}/${NAMES.length} vs ${b.passed.size}/${NAMES.length}; load average ${before} → ${load()}`,
          );
        }
      }
    }
    console.log('\n| concurrency, wait | pages/s ours | pages/s peer | ratio ours/peer (rounds) | checklist ours | checklist peer | CPU-s per page ours / peer (ratio) | peak PSS ours / peer (ratio) |');
    console.log('|---|---|---|---|---|---|---|---|');
    for (const [key, { ours: a, peer: b }] of results) {
      const rate = (list: Outcome[]) => (RUN.length * list.length) / list.reduce((sum, run) => sum + run.seconds, 0);
      const ratios = a.map((run, index) => (b[index]?.seconds ?? run.seconds) / run.seconds);
      const checks = (list: Outcome[]) => range(list.map((run) => run.passed.size), 0);
      const cpu = (list: Outcome[]) => list.reduce((sum, run) => sum + run.cpu, 0) / (RUN.length * list.length);
      const pss = (list: Outcome[]) => Math.max(...list.map((run) => run.peak.pss));
      const pssRatios = a.map((run, index) => run.peak.pss / (b[index]?.peak.pss ?? run.peak.pss));
      console.log(
        `| ${key} | ${rate(a).toFixed(2)} | ${rate(b).toFixed(2)} | ${(rate(a) / rate(b)).toFixed(2)} (${range(ratios)}) | ${checks(a)}/${NAMES.length} | ${checks(b)}/${NAMES.length} | ` +
          `${cpu(a).toFixed(3)} / ${cpu(b).toFixed(3)} (${(cpu(a) / cpu(b)).toFixed(2)}) | ${mb(pss(a))} / ${mb(pss(b))} (${range(pssRatios)}) |`,
      );
    }
    console.log('\npeak PSS by part (ours: the highest peak of each configuration):');
    for (const [key, { ours: a, peer: b }] of results) {
      const top = (list: Outcome[]) => list.reduce((best, run) => (run.peak.pss > best.peak.pss ? run : best));
      const parts = (run: Outcome) =>
        [...run.peak.parts]
          .sort((x, y) => y[1].pss - x[1].pss)
          .map(([part, memory]) => `${part}${memory.processes > 1 ? ` ×${memory.processes}` : ''} ${mb(memory.pss)}`)
          .join(', ');
      console.log(`- ${key}: ours ${parts(top(a))}; peer ${parts(top(b))}`);
    }
    const missed = (side: 'ours' | 'peer') => [...new Set([...results.values()].flatMap((entry) => entry[side].flatMap((run) => NAMES.filter((name) => !run.passed.has(name)))))];
    console.log(`\nchecks missed at least once: ours [${missed('ours').join(', ')}], peer [${missed('peer').join(', ')}]`);
  } finally {
    await bench.close();
    await site.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
