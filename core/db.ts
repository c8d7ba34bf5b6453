/**
 * MongoDB access shared by the API and the activities. The same code runs on MongoDB 7 and on
 * FerretDB 1.24 (local default), so it avoids what FerretDB lacks: transactions, change streams, TTL
 * indexes, `$lookup`, and atomic updates (FerretDB's updates are read-modify-write; see DESIGN.md).
 * Collections declare their indexes in `INDEXES`; `openDatabase` creates them at start-up.
 */
import { MongoClient, type Db, type IndexDescription } from 'mongodb';
import { ACCOUNT_INDEXES } from './accounts/indexes';
import { BATCH_INDEXES } from './batch/store';
import { CRAWL_INDEXES } from './crawls/store';
import { EXTRACT_INDEXES } from './extract/store';
import type { Config } from './config';
import type { Logger } from './log';

/** Indexes per collection, owned by the modules that use them and listed here so start-up creates them. */
export const INDEXES: Record<string, IndexDescription[]> = {
  self_checks: [{ key: { created_at: 1 }, name: 'created_at' }],
  ...ACCOUNT_INDEXES,
  ...CRAWL_INDEXES,
  ...EXTRACT_INDEXES,
  ...BATCH_INDEXES,
};

/** MongoDB's duplicate-key error (code 11000), as both engines raise it for a unique index. */
export const isDuplicateKey = (error: unknown): boolean => (error as { code?: unknown } | null)?.code === 11000;

export interface Database {
  client: MongoClient;
  db: Db;
  ping(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function openDatabase(
  config: Pick<Config, 'mongodbUrl' | 'mongodbDatabase'>,
  log: Logger,
  options: { ensureIndexes?: boolean } = {},
): Promise<Database> {
  if (!config.mongodbUrl) throw new Error('MONGODB_URL is not set and no local database was started');
  const client = new MongoClient(config.mongodbUrl, {
    serverSelectionTimeoutMS: 5_000,
    connectTimeoutMS: 5_000,
    appName: 'fetchplane',
  });
  await client.connect();
  const db = client.db(config.mongodbDatabase);
  if (options.ensureIndexes !== false) await ensureIndexes(db, log);
  return {
    client,
    db,
    async ping(timeoutMs = 2_000) {
      await db.command({ ping: 1 }, { timeoutMS: timeoutMs });
    },
    close: () => client.close(),
  };
}

async function ensureIndexes(db: Db, log: Logger): Promise<void> {
  for (const [collection, indexes] of Object.entries(INDEXES)) {
    if (indexes.length === 0) continue;
    // One index per call: FerretDB 1.24 drops the connection (a server-side panic) when one
    // createIndexes call lists several indexes that already exist, as on every start after the first.
    for (const index of indexes) await db.collection(collection).createIndexes([index]);
    log.debug('indexes ready', { collection, count: indexes.length });
  }
}
