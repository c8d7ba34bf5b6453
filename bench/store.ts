/**
 * `npx tsx bench/store.ts`: `_id` look-ups on the local FerretDB as `npm start` builds it (with the
 * patches of scripts/ferretdb/patches) against the same FerretDB built without them, in one run. Both
 * servers get one collection of small documents with string `_id`s, grown to each size in turn; at each
 * size the same random ids are looked up on both:
 * - `findOne({_id})`: median of `--lookups` look-ups;
 * - `find({_id: {$in: [1,000 ids]}})`: median of `--batches` queries.
 * Goals: the patched look-up grows less than 2× from 10,000 to 1,000,000 documents, and is at least
 * 20× faster than the unpatched one at 1,000,000. Options: --sizes 10000,100000,1000000.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { MongoClient, type Collection } from 'mongodb';
import { childEnvironment, processConfig } from '../base/config';
import { ensureFerretDb } from '../scripts/stack/binaries';
import { ManagedProcess } from '../scripts/stack/process';
import { freePort } from '../test/helpers/ports';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000,1000000' },
    lookups: { type: 'string', default: '25' },
    batches: { type: 'string', default: '3' },
  },
});
const SIZES = values.sizes.split(',').map(Number);
const LOOKUPS = Number(values.lookups);
const BATCHES = Number(values.batches);
const INSERT_BATCH = 5_000;

interface Row {
  _id: string;
  n: number;
  tag: string;
}

interface Server {
  name: string;
  process: ManagedProcess;
  client: MongoClient;
  rows: Collection<Row>;
  dataDir: string;
}

async function startServer(name: string, binary: string): Promise<Server> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `fetchplane-store-bench-${name}-`));
  const port = await freePort();
  const url = `mongodb://127.0.0.1:${port}/`;
  const process = new ManagedProcess({
    name: `ferretdb-${name}`,
    command: binary,
    args: ['-listen', `127.0.0.1:${port}`, '-data', dataDir, '-exit-with-parent'],
    env: childEnvironment({}),
    stdinPipe: true,
    cwd: dataDir,
    logDir: dataDir,
    runDir: dataDir,
    probe: async () => {
      const probe = new MongoClient(url, { serverSelectionTimeoutMS: 500 });
      try {
        await probe.connect();
        await probe.db('admin').command({ ping: 1 });
        return true;
      } catch {
        return false;
      } finally {
        await probe.close();
      }
    },
  });
  await process.start();
  const client = new MongoClient(url);
  await client.connect();
  return { name, process, client, rows: client.db('bench').collection<Row>('rows'), dataDir };
}

const idOf = (index: number): string => `row-${index.toString(36).padStart(6, '0')}`;

async function grow(server: Server, from: number, to: number): Promise<void> {
  for (let start = from; start < to; start += INSERT_BATCH) {
    const batch = Array.from({ length: Math.min(INSERT_BATCH, to - start) }, (_, offset) => ({ _id: idOf(start + offset), n: start + offset, tag: 'x' }));
    await server.rows.insertMany(batch, { ordered: false });
  }
}

const median = (samples: number[]): number => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)] ?? NaN;

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

function randomIds(size: number, count: number, seed: number): string[] {
  let state = seed;
  return Array.from({ length: count }, () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return idOf(state % size);
  });
}

async function measure(server: Server, size: number, lookups: number, batches: number): Promise<{ findOne: number; inBatch: number }> {
  const single: number[] = [];
  for (const id of randomIds(size, lookups, size)) {
    single.push(await timed(async () => {
      const found = await server.rows.findOne({ _id: id });
      if (!found) throw new Error(`${server.name}: ${id} not found`);
    }));
  }
  const many: number[] = [];
  for (let batch = 0; batch < batches; batch++) {
    const ids = [...new Set(randomIds(size, 1_000, size + batch + 1))];
    many.push(await timed(async () => {
      const found = await server.rows.find({ _id: { $in: ids } }).toArray();
      if (found.length !== ids.length) throw new Error(`${server.name}: $in found ${found.length} of ${ids.length}`);
    }));
  }
  return { findOne: median(single), inBatch: median(many) };
}

async function main(): Promise<void> {
  const config = processConfig();
  const env = childEnvironment({});
  const report = (line: string) => console.log(`[bench] ${line}`);
  const patched = await startServer('patched', ensureFerretDb(config.stackDir, env, true, report));
  const unpatched = await startServer('unpatched', ensureFerretDb(config.stackDir, env, true, report, { patched: false }));
  const results: Array<{ size: number; patched: { findOne: number; inBatch: number }; unpatched: { findOne: number; inBatch: number } }> = [];
  try {
    let current = 0;
    for (const size of SIZES) {
      const started = performance.now();
      await Promise.all([grow(patched, current, size), grow(unpatched, current, size)]);
      current = size;
      report(`${size.toLocaleString('en-US')} documents in each (${((performance.now() - started) / 1000).toFixed(1)} s to insert)`);
      // The unpatched server scans: fewer samples keep a 1,000,000-document run to minutes.
      const scale = Math.max(1, Math.round(size / 100_000));
      const row = {
        size,
        patched: await measure(patched, size, LOOKUPS, BATCHES),
        unpatched: await measure(unpatched, size, Math.max(3, Math.round(LOOKUPS / scale)), Math.max(1, Math.round(BATCHES / scale))),
      };
      results.push(row);
      report(`findOne ${row.patched.findOne.toFixed(2)} ms patched, ${row.unpatched.findOne.toFixed(2)} ms unpatched; $in of 1,000: ${row.patched.inBatch.toFixed(1)} ms vs ${row.unpatched.inBatch.toFixed(1)} ms`);
    }
  } finally {
    for (const server of [patched, unpatched]) {
      await server.client.close();
      await server.process.stop();
      rmSync(server.dataDir, { recursive: true, force: true });
    }
  }
  console.log('\n| documents | findOne patched | findOne unpatched | ratio | $in 1,000 patched | $in 1,000 unpatched | ratio |');
  console.log('|---|---|---|---|---|---|---|');
  for (const row of results) {
    console.log(
      `| ${row.size.toLocaleString('en-US')} | ${row.patched.findOne.toFixed(2)} ms | ${row.unpatched.findOne.toFixed(2)} ms | ${(row.unpatched.findOne / row.patched.findOne).toFixed(1)}× | ` +
        `${row.patched.inBatch.toFixed(1)} ms | ${row.unpatched.inBatch.toFixed(1)} ms | ${(row.unpatched.inBatch / row.patched.inBatch).toFixed(1)}× |`,
    );
  }
  const first = results[0];
  const last = results[results.length - 1];
  if (first && last && first !== last) {
    console.log(`\npatched findOne growth ${first.size.toLocaleString('en-US')} → ${last.size.toLocaleString('en-US')}: ${(last.patched.findOne / first.patched.findOne).toFixed(2)}× (goal < 2×)`);
    console.log(`patched $in growth: ${(last.patched.inBatch / first.patched.inBatch).toFixed(2)}× (goal < 2×)`);
    console.log(`unpatched/patched at ${last.size.toLocaleString('en-US')}: findOne ${(last.unpatched.findOne / last.patched.findOne).toFixed(1)}×, $in ${(last.unpatched.inBatch / last.patched.inBatch).toFixed(1)}× (goal ≥ 20×)`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
