/**
 * `npx tsx bench/stream-scan.ts [--pages 1000]`: what refusing a hostile page while it downloads
 * costs the API's event loop (engine/outputs/scan/stream.ts). The page of bench/fairness.ts (nested
 * 900,000 deep) arrives in 16 KB pieces until the depth cap refuses it; the baseline, in the same run,
 * is a flat page of as many bytes (paragraphs side by side) scanned the same way to its end. Prints
 * CPU per page and the collector's work (major collections, their pause, heap used at the end) of
 * each, and the ratios.
 */
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { StreamScan } from '../engine/outputs/scan/stream';

const { values } = parseArgs({ options: { pages: { type: 'string' } } });
const PAGES = Math.min(100_000, Math.max(10, Number(values.pages ?? 1000)));
const CAPS = { maxChars: 10 * 1024 * 1024, maxNodes: 200_000, maxDepth: 50_000 };
const PIECE = 16 * 1024;

const deepDepth = 900_000;
const deep = `<html><body>${'<div>'.repeat(deepDepth)}<p>deep</p>${'</div>'.repeat(deepDepth)}</body></html>`;
/** What the deep page's scan reads before it is refused (measured once below). */
function piecesOf(page: string, bytes: number): string[] {
  const pieces: string[] = [];
  for (let at = 0; at < Math.min(page.length, bytes); at += PIECE) pieces.push(page.slice(at, at + PIECE));
  return pieces;
}

interface Result {
  cpuMs: number;
  majors: number;
  majorPauseMs: number;
  heapMb: number;
  refused: number;
}

async function run(pieces: string[]): Promise<Result> {
  global.gc?.();
  let majors = 0;
  let majorPauseMs = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (((entry as { detail?: unknown }).detail as { kind?: number } | undefined)?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        majors++;
        majorPauseMs += entry.duration;
      }
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  const before = process.cpuUsage();
  let refused = 0;
  for (let n = 0; n < PAGES; n++) {
    const scan = new StreamScan(CAPS);
    for (const piece of pieces) {
      if (scan.push(piece)) {
        refused++;
        break;
      }
    }
  }
  const used = process.cpuUsage(before);
  const heapMb = process.memoryUsage().heapUsed / 1e6;
  // Entries are delivered asynchronously.
  await new Promise((resolve) => setTimeout(resolve, 50));
  observer.disconnect();
  return { cpuMs: (used.user + used.system) / 1000, majors, majorPauseMs, heapMb, refused };
}

async function main(): Promise<void> {
  // How far the deep page is read before the depth cap refuses it.
  const probe = new StreamScan(CAPS);
  let read = 0;
  for (const piece of piecesOf(deep, deep.length)) {
    read += piece.length;
    if (probe.push(piece)) break;
  }
  const paragraph = '<p>Lorem ipsum <b>dolor</b> sit amet.</p>';
  const flat = `<html><body>${paragraph.repeat(Math.ceil(read / paragraph.length))}</body></html>`.slice(0, read);
  const sides: Array<[string, string[]]> = [
    ['flat page (baseline)', piecesOf(flat, read)],
    ['deep page (refused)', piecesOf(deep, read)],
  ];
  console.log(`${PAGES} pages of ${(read / 1024).toFixed(0)} KB each in ${PIECE / 1024} KB pieces (the deep page is refused after that much)`);
  const results: Record<string, Result> = {};
  for (const [name, pieces] of sides) {
    const result = await run(pieces);
    results[name] = result;
    console.log(
      `${name.padEnd(22)} ${(result.cpuMs / PAGES).toFixed(2)} ms CPU per page, ${result.majors} major collections (${result.majorPauseMs.toFixed(0)} ms), heap used at the end ${result.heapMb.toFixed(0)} MB, refused ${result.refused}`,
    );
  }
  const [base, deepResult] = [results['flat page (baseline)'] as Result, results['deep page (refused)'] as Result];
  console.log(`ratio deep/flat: CPU ${(deepResult.cpuMs / base.cpuMs).toFixed(2)}, major collections ${deepResult.majors}/${base.majors}`);
}

void main();
