/**
 * `npx tsx bench/auth-overhead.ts`: requests per second of plan usage (`GET /v1/subscriptions/self/details`)
 * WITH key authentication against the same handler WITHOUT it (a fixed principal), in one run, at the
 * same concurrency, on loopback. Goal: ratio ≥ 0.9. A third figure shows authentication with the key
 * cache off (every request looks its key up in the database), for scale.
 *
 * The database is MONGODB_URL when set, else a FerretDB this script starts in a temporary folder.
 * Options: --concurrency N (default 16), --round-ms N (default 2000), --rounds N (default 3).
 */
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { planUsageRoutes } from '../api/accounts/usage-routes';
import { createApp } from '../api/app';
import { assumePrincipal } from '../api/auth/authenticate';
import { apiDeps } from '../api/deps';
import { createAccounts } from '../core/accounts';
import { processConfig } from '../base/config';
import { openDatabase } from '../base/db';
import { SERVICE_INDEXES } from '../core/indexes';
import { createLogger } from '../base/log';
import { connectTemporal } from '../base/temporal';
import { Stack } from '../scripts/stack/stack';
import { createFetching } from '../core/fetch/service';

const { values: options } = parseArgs({
  options: { concurrency: { type: 'string' }, 'round-ms': { type: 'string' }, rounds: { type: 'string' } },
});
const bounded = (raw: string | undefined, fallback: number, max: number): number => Math.min(max, Math.max(1, Number(raw ?? fallback) || fallback));
const concurrency = bounded(options.concurrency, 16, 256);
const roundMs = bounded(options['round-ms'], 2000, 30_000);
const rounds = bounded(options.rounds, 3, 10);

async function serve(listener: http.RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(listener);
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Requests completed in `ms` by `concurrency` loops over keep-alive connections. */
async function measure(url: string, headers: Record<string, string>, ms: number): Promise<number> {
  const pool = new Pool(url, { connections: concurrency, pipelining: 1 });
  const deadline = Date.now() + ms;
  let done = 0;
  const loop = async () => {
    while (Date.now() < deadline) {
      const response = await pool.request({ path: '/v1/subscriptions/self/details', method: 'GET', headers });
      await response.body.dump();
      if (response.statusCode !== 200) throw new Error(`unexpected status ${response.statusCode}`);
      done++;
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: concurrency }, loop));
  const elapsed = Date.now() - started;
  await pool.close();
  return (done * 1000) / elapsed;
}

async function main(): Promise<void> {
  const base = processConfig();
  const log = createLogger('error');
  let stack: Stack | undefined;
  let dataDir: string | undefined;
  let mongodbUrl = base.mongodbUrl;
  if (!mongodbUrl) {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'fetchplane-bench-'));
    stack = new Stack({ config: { ...base, dataDir }, ports: { ferretdb: 0 } });
    stack.prepare();
    await stack.startOne('ferretdb');
    mongodbUrl = stack.urls.mongodb;
  }
  const database = `fetchplane_bench_${process.pid}`;
  const config = { ...base, mongodbUrl, mongodbDatabase: database };
  const db = await openDatabase(config, log, { indexes: SERVICE_INDEXES });
  const temporal = connectTemporal({ temporalAddress: '127.0.0.1:7233', temporalNamespace: 'default' }); // lazy, never used
  const servers: Array<{ close(): Promise<void> }> = [];
  try {
    const accounts = createAccounts({ db: db.db, config, log });
    const uncached = createAccounts({ db: db.db, config: { ...config, keyCacheTtlMs: 0 }, log });
    // A budget of its own: the free plan's (200/s) would refuse the measured loops with 429.
    const account = await accounts.store.createAccount({ plan: 'free', overrides: { requestsPerSecond: 1_000_000, requestBurst: 1_000_000, requestsInFlight: 1_000_000 } });
    const { key, doc } = await accounts.store.createKey(account._id);
    const principal = await accounts.principalFor(account._id, doc.key_id);
    const fetching = createFetching({ config, log, db: db.db }); // unused by plan usage; never launches a browser
    servers.push({ close: () => fetching.close() });
    const deps = apiDeps({ config, log, db, temporal, accounts, fetching });
    const variants = {
      'without authentication': { app: createApp(deps, planUsageRoutes(deps, { authentication: assumePrincipal(principal) })), headers: {} },
      'with authentication': { app: createApp(deps, planUsageRoutes(deps)), headers: { 'X-API-Key': key } },
      'with authentication, key cache off': {
        app: createApp({ ...deps, accounts: uncached }, planUsageRoutes({ accounts: uncached, config })),
        headers: { 'X-API-Key': key },
      },
    };
    const targets = await Promise.all(
      Object.entries(variants).map(async ([name, variant]) => {
        const server = await serve(variant.app.callback());
        servers.push(server);
        return { name, url: server.url, headers: variant.headers as Record<string, string>, rates: [] as number[] };
      }),
    );
    process.stdout.write(`plan usage on ${base.mongodbUrl ? 'MONGODB_URL' : 'a local FerretDB'}, concurrency ${concurrency}, ${rounds} rounds of ${roundMs} ms per variant\n`);
    for (const target of targets) await measure(target.url, target.headers, 500); // warm-up
    // Interleaved rounds, so that drift in the machine's load falls on every variant alike.
    for (let round = 0; round < rounds; round++) {
      for (const target of targets) target.rates.push(await measure(target.url, target.headers, roundMs));
    }
    const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
    const [without, withAuth, uncachedAuth] = targets.map((target) => mean(target.rates)) as [number, number, number];
    for (const target of targets) process.stdout.write(`${target.name.padEnd(36)} ${mean(target.rates).toFixed(0).padStart(7)} requests/s\n`);
    process.stdout.write(`ratio with / without authentication:  ${(withAuth / without).toFixed(3)}  (goal ≥ 0.9)\n`);
    process.stdout.write(`ratio with the key cache off:         ${(uncachedAuth / without).toFixed(3)}  (for scale)\n`);
  } finally {
    await Promise.all(servers.map((server) => server.close()));
    await db.db.dropDatabase().catch(() => undefined);
    await db.close();
    await temporal.close();
    if (stack) await stack.component('ferretdb').stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
