/**
 * Data retention: what is removed, and when. A Temporal Schedule (registered by the worker) runs the
 * sweep; each rule deletes in bounded batches by `_id` (`_id: {$in}`, an index search on both engines),
 * so a sweep never holds a large write and can stop anywhere.
 *
 * | what                                        | kept after it ended or was written          |
 * |---------------------------------------------|---------------------------------------------|
 * | a crawl and all its data                    | `RESULTS_RETENTION_DAYS` after it ended     |
 * | a Batch run, its results and bodies         | `RESULTS_RETENTION_DAYS` after it ended (a  |
 * |                                             | deleted one at the next sweep once it ended)|
 * | a deleted Batch job and its tasks           | once none of its runs is left               |
 * | Batch exports and uploaded inputs           | until they expire                           |
 * | Extract sample snapshots                    | `RESULTS_RETENTION_DAYS`                    |
 * | webhook events and their attempts           | `RESULTS_RETENTION_DAYS` (pending ones stay)|
 * | idempotency keys                            | `IDEMPOTENCY_RETENTION_HOURS`               |
 * | agent signup rate-limit records             | twice `SIGNUP_RATE_WINDOW_MS`               |
 * | mode=auto escalation memory                 | until it expires (`AUTO_MODE_MEMORY_MINUTES`)|
 * | OAuth refresh tokens never spent            | until they expire (30 days)                 |
 * | a monitor's checks, their pages and bills   | `RESULTS_RETENTION_DAYS` after the check    |
 * | a deleted monitor                           | `RESULTS_RETENTION_DAYS` after its deletion |
 * | change tracking's versions of a URL         | the plan's `history_versions`, `history_days`|
 * |                                             | (core/changes/retention.ts)                 |
 *
 * A crawl's own record goes first: from then on it reads as missing (404), and its other documents
 * are orphans the next steps remove, checked against the crawl records again just before they go, so
 * a crawl started during the sweep is never touched. Batch runs go the same way (core/batch/store/retention.ts).
 * Stored bodies and files (the blob store, core/jobs/blobs.ts) go last, once their owner's record has.
 * Other surfaces add their rules to `RULES`.
 */
import type { Db, Document, Filter } from 'mongodb';
import { sweepBatch } from './batch/store/retention';
import type { Config } from '../base/config';
import { sweepOrphanBlobs, type BlobOwnerKind } from './jobs/blobs';
import type { PlanConfig } from './accounts/plans';
import { livingChangeOwners, sweepChanges } from './changes/retention';

/** The plans come in for change tracking, whose histories are kept by each account's plan. */
export type RetentionConfig = Pick<Config, 'resultsRetentionDays' | 'idempotencyRetentionHours' | 'signupRateWindowMs' | 'retentionBatch'> & PlanConfig;

export interface SweepReport {
  /** Documents removed per collection. */
  removed: Record<string, number>;
}

interface AgeRule {
  kind: 'age';
  collection: string;
  /** Documents older than the cutoff (and matching `extra`) are removed. */
  field: string;
  keepMs(config: RetentionConfig): number;
  extra?: Filter<Document>;
}

interface ExpiryRule {
  kind: 'expiry';
  collection: string;
  field: string;
}

type Rule = AgeRule | ExpiryRule;

const DAY_MS = 24 * 60 * 60 * 1000;

/** Collections holding a crawl's data, each `_id` starting with `<crawl_id>|`. */
export const CRAWL_DATA_COLLECTIONS = ['crawl_urls', 'crawl_found', 'crawl_commits', 'crawl_outcomes', 'crawl_charges', 'crawl_removed'] as const;

export const RULES: Rule[] = [
  { kind: 'age', collection: 'extract_snapshots', field: 'fetched_at', keepMs: (config) => config.resultsRetentionDays * DAY_MS },
  { kind: 'age', collection: 'webhook_events', field: 'created_at', keepMs: (config) => config.resultsRetentionDays * DAY_MS, extra: { state: { $ne: 'pending' } } },
  { kind: 'age', collection: 'webhook_attempts', field: 'at', keepMs: (config) => config.resultsRetentionDays * DAY_MS },
  { kind: 'age', collection: 'idempotency_keys', field: 'created_at', keepMs: (config) => config.idempotencyRetentionHours * 60 * 60 * 1000 },
  { kind: 'age', collection: 'signups', field: 'at', keepMs: (config) => 2 * config.signupRateWindowMs },
  { kind: 'age', collection: 'monitor_checks', field: 'ended_at', keepMs: (config) => config.resultsRetentionDays * DAY_MS },
  { kind: 'age', collection: 'monitor_pages', field: 'fetched_at', keepMs: (config) => config.resultsRetentionDays * DAY_MS },
  { kind: 'age', collection: 'monitor_parts', field: 'at', keepMs: (config) => config.resultsRetentionDays * DAY_MS },
  { kind: 'age', collection: 'monitor_charges', field: 'at', keepMs: (config) => config.resultsRetentionDays * DAY_MS },
  { kind: 'age', collection: 'monitors', field: 'updated_at', keepMs: (config) => config.resultsRetentionDays * DAY_MS, extra: { status: 'deleted' } },
  { kind: 'age', collection: 'monitor_lists', field: 'updated_at', keepMs: (config) => config.resultsRetentionDays * DAY_MS, extra: { deleted: true } },
  { kind: 'expiry', collection: 'domain_rungs', field: 'expires_at' },
  { kind: 'expiry', collection: 'batch_exports', field: 'expires_at' },
  { kind: 'expiry', collection: 'batch_job_inputs', field: 'expires_at' },
  { kind: 'expiry', collection: 'oauth_refresh_tokens', field: 'expires_at' },
];

/** Removes the documents matching `filter`, a batch of `_id`s at a time. */
async function removeMatching(db: Db, collection: string, filter: Filter<Document>, batch: number, beat: () => void): Promise<number> {
  const target = db.collection(collection);
  let removed = 0;
  for (;;) {
    const ids = (await target.find(filter, { projection: { _id: 1 }, limit: batch }).toArray()).map((doc) => doc._id as unknown);
    if (ids.length === 0) return removed;
    removed += (await target.deleteMany({ _id: { $in: ids } } as Filter<Document>)).deletedCount;
    beat();
    if (ids.length < batch) return removed;
  }
}

/** Crawl records ended before the cutoff, then everything of crawls that no longer have a record. */
async function sweepCrawls(db: Db, cutoff: Date, batch: number, beat: () => void, removed: Record<string, number>): Promise<void> {
  const ends = db.collection<{ _id: string; finished_at: Date }>('crawl_ends');
  const crawls = db.collection<{ _id: string }>('crawls');
  for (;;) {
    const expired = (await ends.find({ finished_at: { $lt: cutoff } }, { projection: { _id: 1 }, limit: batch }).toArray()).map((doc) => doc._id);
    if (expired.length === 0) break;
    removed.crawls = (removed.crawls ?? 0) + (await crawls.deleteMany({ _id: { $in: expired } })).deletedCount;
    removed.crawl_ends = (removed.crawl_ends ?? 0) + (await ends.deleteMany({ _id: { $in: expired } })).deletedCount;
    beat();
    if (expired.length < batch) break;
  }
  for (const name of CRAWL_DATA_COLLECTIONS) {
    const collection = db.collection<{ _id: string }>(name);
    const cursor = collection.find({}, { projection: { _id: 1 }, batchSize: batch });
    let pending: string[] = [];
    const flush = async () => {
      const owners = [...new Set(pending.map((id) => id.slice(0, id.indexOf('|'))))];
      const living = new Set((await crawls.find({ _id: { $in: owners } }, { projection: { _id: 1 } }).toArray()).map((doc) => doc._id));
      const orphans = pending.filter((id) => !living.has(id.slice(0, id.indexOf('|'))));
      if (orphans.length > 0) removed[name] = (removed[name] ?? 0) + (await collection.deleteMany({ _id: { $in: orphans } })).deletedCount;
      pending = [];
      beat();
    };
    for await (const doc of cursor) {
      if (typeof doc._id === 'string' && doc._id.includes('|')) pending.push(doc._id);
      if (pending.length >= batch) await flush();
    }
    if (pending.length > 0) await flush();
  }
}

/** The record that keeps a blob of each kind of owner (change tracking's owners name a generation too). */
const BLOB_OWNERS: Record<Exclude<BlobOwnerKind, 'change_track' | 'change_crawl'>, string> = {
  batch_run: 'batch_runs',
  batch_export: 'batch_exports',
  batch_input: 'batch_job_inputs',
  crawl: 'crawls',
};

async function living(db: Db, kind: BlobOwnerKind, owners: string[]): Promise<Set<string>> {
  if (kind === 'change_track' || kind === 'change_crawl') return livingChangeOwners(db, kind, owners);
  const records = db.collection<{ _id: string }>(BLOB_OWNERS[kind]);
  return new Set((await records.find({ _id: { $in: owners } }, { projection: { _id: 1 } }).toArray()).map((doc) => doc._id));
}

export async function sweep(db: Db, config: RetentionConfig, now: Date, beat: () => void = () => undefined): Promise<SweepReport> {
  const removed: Record<string, number> = {};
  const batch = config.retentionBatch;
  await sweepCrawls(db, new Date(now.getTime() - config.resultsRetentionDays * DAY_MS), batch, beat, removed);
  for (const rule of RULES) {
    const filter: Filter<Document> =
      rule.kind === 'age'
        ? { [rule.field]: { $lt: new Date(now.getTime() - rule.keepMs(config)) }, ...rule.extra }
        : { [rule.field]: { $lte: now } };
    const count = await removeMatching(db, rule.collection, filter, batch, beat);
    if (count > 0) removed[rule.collection] = (removed[rule.collection] ?? 0) + count;
  }
  // After the rules: expired exports and inputs leave their files as orphans for this step.
  await sweepBatch(db, new Date(now.getTime() - config.resultsRetentionDays * DAY_MS), batch, beat, removed);
  await sweepChanges(db, config, now, batch, beat, removed);
  // Last: every rule above leaves the blobs of what it removed without an owner.
  const blobs = await sweepOrphanBlobs(db, batch, beat, (kind, owners) => living(db, kind, owners));
  if (blobs > 0) removed.blob_chunks = (removed.blob_chunks ?? 0) + blobs;
  return { removed };
}

export const RETENTION_SCHEDULE_ID = 'fetchplane-retention';
export { RETENTION_WORKFLOW_TYPE as RETENTION_WORKFLOW } from './jobs/workflow-names';
