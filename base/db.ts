/**
 * MongoDB access shared by the API and the activities. The same code runs on MongoDB 7 and on
 * FerretDB 1.24 (local default), so it avoids what FerretDB lacks: transactions, change streams, TTL
 * indexes, `$lookup`, and atomic updates (FerretDB's updates are read-modify-write; see DESIGN.md).
 *
 * Each domain declares the indexes of its collections; a process's composition root passes them to
 * `openDatabase` (core/indexes.ts lists them), so this module depends on no domain.
 */
import { MongoClient, type Collection, type Db, type IndexDescription } from 'mongodb';
import type { Config } from './config';
import type { Logger } from './log';

/** Indexes per collection, as a domain declares them. */
export type IndexRegistration = Readonly<Record<string, IndexDescription[]>>;

/** MongoDB's duplicate-key error (code 11000), as both engines raise it for a unique index. */
export const isDuplicateKey = (error: unknown): boolean => (error as { code?: unknown } | null)?.code === 11000;

/** Write errors of an unordered insertMany that are all duplicate keys: their indexes; anything else rethrows. */
export function duplicateIndexes(error: unknown): Set<number> {
  const writeErrors = (error as { writeErrors?: unknown }).writeErrors;
  const list = Array.isArray(writeErrors) ? writeErrors : writeErrors ? [writeErrors] : [];
  if (list.length === 0) throw error;
  const duplicates = new Set<number>();
  for (const entry of list as Array<{ code?: number; index?: number; err?: { code?: number; index?: number } }>) {
    const code = entry.code ?? entry.err?.code;
    const index = entry.index ?? entry.err?.index;
    if (code !== 11000 || typeof index !== 'number') throw error;
    duplicates.add(index);
  }
  return duplicates;
}

/** Inserts, ignoring documents that already exist (a retried write). */
export async function insertIgnoringDuplicates<T extends { _id: string }>(collection: Collection<T>, docs: T[]): Promise<Set<number>> {
  if (docs.length === 0) return new Set();
  try {
    await collection.insertMany(docs as never[], { ordered: false });
    return new Set();
  } catch (error) {
    return duplicateIndexes(error);
  }
}

export interface Database {
  client: MongoClient;
  db: Db;
  ping(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** DATABASE_TIMEOUT_MS's default, for callers that pass no configuration of it. */
const DEFAULT_TIMEOUT_MS = 3_000;

export async function openDatabase(
  config: Pick<Config, 'mongodbUrl' | 'mongodbDatabase'> & Partial<Pick<Config, 'databaseTimeoutMs'>>,
  log: Logger,
  options: { indexes?: readonly IndexRegistration[] } = {},
): Promise<Database> {
  if (!config.mongodbUrl) throw new Error('MONGODB_URL is not set and no local database was started');
  const timeoutMs = config.databaseTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  // While the database is away, an operation waits for it at most DATABASE_TIMEOUT_MS (server
  // selection; a retried read or write waits once more) and then fails with an error the API answers
  // as 503 (unavailable.ts). No socket time-out: exports and index builds may rightly take long, and a
  // server that dies resets its connections, which fails the operations on them at once.
  const client = new MongoClient(config.mongodbUrl, {
    serverSelectionTimeoutMS: timeoutMs,
    connectTimeoutMS: timeoutMs,
    appName: 'fetchplane',
  });
  await client.connect();
  const db = client.db(config.mongodbDatabase);
  for (const registration of options.indexes ?? []) await ensureIndexes(db, registration, log);
  return {
    client,
    db,
    async ping(timeoutMs = 2_000) {
      await db.command({ ping: 1 }, { timeoutMS: timeoutMs });
    },
    close: () => client.close(),
  };
}

async function ensureIndexes(db: Db, registration: IndexRegistration, log: Logger): Promise<void> {
  for (const [collection, indexes] of Object.entries(registration)) {
    if (indexes.length === 0) continue;
    // One index per call: FerretDB 1.24 drops the connection (a server-side panic) when one
    // createIndexes call lists several indexes that already exist, as on every start after the first.
    for (const index of indexes) await db.collection(collection).createIndexes([index]);
    log.debug('indexes ready', { collection, count: indexes.length });
  }
}

/**
 * A write that failed in a way that leaves it unknown whether its entry landed: the store that wrote it
 * tells once the database answers again (core/accounts/chain.ts). Its cause is the failure itself.
 */
export class UnknownOutcome extends Error {
  readonly kind = 'unknown-outcome';

  constructor(
    cause: unknown,
    readonly entry: string,
    readonly token: string,
  ) {
    super(`the write of ${entry} may or may not have landed: ${(cause as Error).message}`, { cause });
    this.name = 'UnknownOutcome';
  }
}

export const isUnknownOutcome = (error: unknown): error is UnknownOutcome =>
  typeof error === 'object' && error !== null && (error as { kind?: unknown }).kind === 'unknown-outcome';
