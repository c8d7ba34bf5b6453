/**
 * `npx tsx bench/limit-slots.ts`: what the limit gate's in-process serialisation and refusal memory
 * still save now that limits are slot documents (core/accounts/limit-gate.ts), on a private FerretDB.
 *
 * 1. `--creations` concurrent creations of one account in one process against a limit of `--limit`:
 *    with the account's creations serialised in the process, and without (each reaches for a slot at
 *    once). Printed: wall time, slot inserts lost to another creation, and the holders' reads.
 * 2. `--refusals` creations of an account whose slots are all held, one after the other: with the
 *    refusal remembered (LIMIT_REFUSAL_MEMORY_MS 1,500) and without. Printed: time per refusal and
 *    the database reads they cost.
 *
 *   npx tsx bench/limit-slots.ts [--creations 40] [--limit 20] [--refusals 500] [--rounds 3]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { MongoClient } from 'mongodb';
import { loadConfig, processConfig } from '../base/config';
import { systemClock } from '../base/clock';
import { LimitGate } from '../core/accounts/limit-gate';
import { PlanCatalogue } from '../core/accounts/plans';
import { Stack } from '../scripts/stack/stack';

const { values: options } = parseArgs({ options: { creations: { type: 'string' }, limit: { type: 'string' }, refusals: { type: 'string' }, rounds: { type: 'string' } } });
const CREATIONS = Math.min(1_000, Math.max(2, Number(options.creations ?? 40)));
const LIMIT = Math.min(500, Math.max(1, Number(options.limit ?? 20)));
const REFUSALS = Math.min(10_000, Math.max(10, Number(options.refusals ?? 500)));
const ROUNDS = Math.min(10, Math.max(1, Number(options.rounds ?? 3)));

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'fetchplane-limit-bench-'));
  const stack = new Stack({ config: { ...processConfig(), dataDir }, ports: { api: 0, ferretdb: 0, temporal: 0, temporalUi: 0 }, serviceEnv: { LOG_LEVEL: 'warn' } });
  try {
    await stack.start();
    const client = await new MongoClient(stack.urls.mongodb).connect();
    const db = client.db('limit_bench');
    const free = new PlanCatalogue(loadConfig(stack.component('api').spec.env)).resolve('free');
    const plan = { ...free, limits: { ...free.limits, mcpSessions: LIMIT } };
    let account = 0;
    const reads = { n: 0 };
    const holders = new Set<string>();
    const states = async (ids: string[]): Promise<Map<string, 'live' | 'ended'>> => {
      reads.n++;
      await db.collection('limit_bench_things').findOne({ _id: ids[0] as never });
      return new Map(ids.filter((id) => holders.has(id)).map((id) => [id, 'live' as const]));
    };
    const create = (gate: LimitGate, accountId: string, id: string) =>
      gate.admit({ accountId, plan }, 'mcpSessions', { id, states }, async () => void holders.add(id)).then(
        () => 'made',
        () => 'refused',
      );

    console.log(`1. ${CREATIONS} concurrent creations of one account in one process, limit ${LIMIT}, ${ROUNDS} rounds`);
    for (const serialise of [true, false]) {
      let ms = 0;
      let conflicts = 0;
      let made = 0;
      reads.n = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const gate = new LimitGate(db, systemClock, 0, serialise);
        const accountId = `acc${++account}`;
        const started = performance.now();
        const outcomes = await Promise.all(Array.from({ length: CREATIONS }, (_, n) => create(gate, accountId, `${accountId}-${n}`)));
        ms += performance.now() - started;
        conflicts += gate.conflicts;
        made += outcomes.filter((outcome) => outcome === 'made').length;
      }
      console.log(`  ${serialise ? 'serialised  ' : 'all at once '} ${(ms / ROUNDS).toFixed(1).padStart(7)} ms per round, ${(conflicts / ROUNDS).toFixed(1)} slot inserts lost, ${(reads.n / ROUNDS).toFixed(1)} holder reads, ${made / ROUNDS} made of ${LIMIT}`);
    }

    console.log(`2. ${REFUSALS} creations one after the other of an account whose ${LIMIT} slots are held`);
    for (const memoryMs of [1_500, 0]) {
      const gate = new LimitGate(db, systemClock, memoryMs);
      const accountId = `acc${++account}`;
      for (let n = 0; n < LIMIT; n++) await create(gate, accountId, `${accountId}-${n}`);
      reads.n = 0;
      const started = performance.now();
      for (let n = 0; n < REFUSALS; n++) await create(gate, accountId, `${accountId}-x${n}`);
      const ms = performance.now() - started;
      console.log(`  memory ${String(memoryMs).padStart(5)} ms: ${((ms * 1000) / REFUSALS).toFixed(0).padStart(6)} µs per refusal, ${reads.n} holder reads`);
    }
    await client.close();
  } finally {
    await stack.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
