/**
 * Where an HTML output is cheaper: on the caller's thread or on a worker thread. Converts pages of
 * several sizes to Markdown through the engine's HtmlOutputs, many at once (as a busy API does), once
 * with every page inline and once with every page on the pool's threads, in alternating rounds, and
 * prints pages/s and CPU per page (the process's, threads included) of each side and their ratio, by
 * size and node count. A thread costs a fixed amount per page (copying the page and the answer, two
 * messages); HTML_INLINE_MAX_NODES is where that stops mattering against the conversion itself.
 *
 *   npx tsx bench/html-threads.ts [--seconds 2] [--rounds 4] [--concurrency 32] [--threads 2] [--sizes 1,2,4,8,16,32,64]
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { HtmlOutputs, scanHtml } from '../engine/outputs';
import { WorkerPool } from '../engine/threads';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '4' },
    concurrency: { type: 'string', default: '32' },
    threads: { type: 'string', default: '2' },
    sizes: { type: 'string', default: '1,2,4,8,16,32,64' },
  },
});
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const CONCURRENCY = Number(values.concurrency);
const THREADS = Number(values.threads);
const SIZES = (values.sizes ?? '').split(',').map(Number);

/** The same paragraph as bench/fetch-throughput.ts --page-kb: links and emphasis, about 9 characters a node. */
const PARAGRAPH = '<p>Lorem <a href="/a">ipsum</a> dolor <em>sit</em> amet, <b>consectetur</b> adipiscing elit.</p>';
const pageOf = (kb: number): Buffer =>
  Buffer.from(`<!doctype html><html><head><title>bench</title></head><body>${PARAGRAPH.repeat(Math.max(1, Math.round((kb * 1024) / PARAGRAPH.length)))}</body></html>`);

const CAPS = { maxChars: 10 * 1024 * 1024, maxNodes: 10_000_000, maxDepth: 50_000 };

async function side(outputs: HtmlOutputs, page: Buffer, seconds: number): Promise<{ rate: number; cpuUs: number }> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const deadline = started + seconds * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        await outputs.run('markdown', { bytes: page, contentType: 'text/html; charset=utf-8' }, { url: 'https://bench.test/' });
        done++;
      }
    }),
  );
  const used = process.cpuUsage(cpu);
  return { rate: done / ((performance.now() - started) / 1000), cpuUs: (used.user + used.system) / done };
}

async function main(): Promise<void> {
  const pool = new WorkerPool({ size: THREADS, queueLimit: CONCURRENCY * 2, timeoutMs: 60_000, memoryMb: 512 });
  const inline = new HtmlOutputs({ pool, caps: CAPS, inlineMaxChars: Number.MAX_SAFE_INTEGER, inlineMaxNodes: Number.MAX_SAFE_INTEGER, timeoutMs: 60_000, memoryMb: 512 });
  const threaded = new HtmlOutputs({ pool, caps: CAPS, inlineMaxChars: 0, inlineMaxNodes: 0, timeoutMs: 60_000, memoryMb: 512 });
  console.log(`Markdown of one page at a time per caller, ${CONCURRENCY} callers, ${THREADS} threads, ${ROUNDS} alternating rounds of ${SECONDS} s per side and size; ${os.availableParallelism()} cores, load ${os.loadavg()[0]?.toFixed(1)}`);
  try {
    for (const kb of SIZES) {
      const page = pageOf(kb);
      const scan = scanHtml(page.toString('utf8'), CAPS);
      await side(inline, page, 0.5); // warm both paths (JIT, threads started)
      await side(threaded, page, 0.5);
      const totals = { inline: { rate: 0, cpuUs: 0 }, threads: { rate: 0, cpuUs: 0 } };
      const ratios: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const a = await side(inline, page, SECONDS);
        const b = await side(threaded, page, SECONDS);
        totals.inline.rate += a.rate / ROUNDS;
        totals.inline.cpuUs += a.cpuUs / ROUNDS;
        totals.threads.rate += b.rate / ROUNDS;
        totals.threads.cpuUs += b.cpuUs / ROUNDS;
        ratios.push(a.rate / b.rate);
      }
      console.log(
        `${(page.length / 1024).toFixed(1).padStart(6)} KB ${String(scan.ok ? scan.nodes : '?').padStart(6)} nodes: inline ${totals.inline.rate.toFixed(0).padStart(6)} pages/s ${totals.inline.cpuUs.toFixed(0).padStart(6)} µs CPU; ` +
          `threads ${totals.threads.rate.toFixed(0).padStart(6)} pages/s ${totals.threads.cpuUs.toFixed(0).padStart(6)} µs CPU; inline/threads ${(totals.inline.rate / totals.threads.rate).toFixed(2)} (rounds ${ratios.map((ratio) => ratio.toFixed(2)).join(' ')})`,
      );
    }
  } finally {
    await pool.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
