/**
 * Change tracking under retention (a step of core/retention.ts's sweep), by each account's plan now:
 *
 * 1. tracks: a URL no fetch found for `history_days` (or whose account is gone) is deleted whole; else
 *    its floor rises past the versions beyond `history_versions` and those replaced more than
 *    `history_days` ago, which are deleted; blobs no kept version names any more are deleted when a
 *    sweep finds them so twice in a row (a writer stores its blobs before its version: one sweep
 *    between the two must not take them);
 * 2. versions of a track (generation) that is gone: deleted;
 * 3. tracked crawls' baselines of accounts that are gone, or older than the days limit: deleted.
 *
 * The blobs of deleted tracks and baselines are orphans the blob sweep removes (`livingChangeOwners`).
 */
import type { Db } from 'mongodb';
import { PlanCatalogue, type PlanConfig } from '../accounts/plans';
import type { AccountDoc } from '../accounts/store';
import { Blobs, type BlobOwnerKind } from '../jobs/blobs';
import type { HistoryLimits } from './history';
import { latestVersion } from './record';
import { changeCollections, changeIds, type TrackDoc } from './store';

const DAY_MS = 24 * 60 * 60 * 1000;
const WALK = 64;

type Removed = Record<string, number>;

const count = (removed: Removed, name: string, n: number): void => {
  if (n > 0) removed[name] = (removed[name] ?? 0) + n;
};

/** The history limits of each account now; absent: the account is gone. */
async function limitsOf(db: Db, plans: PlanCatalogue, accounts: string[]): Promise<Map<string, HistoryLimits>> {
  const docs = await db
    .collection<AccountDoc>('accounts')
    .find({ _id: { $in: accounts } }, { projection: { _id: 1, plan: 1, overrides: 1, deleted_at: 1 } })
    .toArray();
  const limits = new Map<string, HistoryLimits>();
  for (const doc of docs) {
    if (doc.deleted_at) continue;
    const plan = plans.resolve(doc.plan, doc.overrides ?? {});
    limits.set(doc._id, { versions: Math.max(1, plan.limits.historyVersions), days: plan.limits.historyDays });
  }
  return limits;
}

export async function sweepChanges(db: Db, plans: PlanConfig, now: Date, batch: number, beat: () => void, removed: Removed): Promise<void> {
  const catalogue = new PlanCatalogue(plans);
  const collections = changeCollections(db);
  const blobs = new Blobs(db);

  let pending: TrackDoc[] = [];
  const flush = async (): Promise<void> => {
    const limits = await limitsOf(db, catalogue, [...new Set(pending.map((track) => track.account))]);
    const gone: string[] = [];
    for (const track of pending) {
      const plan = limits.get(track.account);
      if (!plan || track.last_seen_at.getTime() < now.getTime() - plan.days * DAY_MS) gone.push(track._id);
      else await trimTrack(db, track, plan, now, blobs, removed);
    }
    if (gone.length > 0) count(removed, 'change_tracks', (await collections.tracks.deleteMany({ _id: { $in: gone } })).deletedCount);
    pending = [];
    beat();
  };
  for await (const track of collections.tracks.find({}, { projection: { profile: 0 }, batchSize: batch })) {
    pending.push(track);
    if (pending.length >= batch) await flush();
  }
  if (pending.length > 0) await flush();

  await sweepOrphanVersions(db, batch, beat, removed);

  let baselines: Array<{ _id: string; account: string; at: Date }> = [];
  const dropBaselines = async (): Promise<void> => {
    const limits = await limitsOf(db, catalogue, [...new Set(baselines.map((doc) => doc.account))]);
    const stale = baselines.filter((doc) => {
      const plan = limits.get(doc.account);
      return !plan || doc.at.getTime() < now.getTime() - plan.days * DAY_MS;
    });
    if (stale.length > 0) count(removed, 'change_crawls', (await collections.crawls.deleteMany({ _id: { $in: stale.map((doc) => doc._id) } })).deletedCount);
    baselines = [];
    beat();
  };
  for await (const doc of collections.crawls.find({}, { projection: { _id: 1, account: 1, at: 1 }, batchSize: batch })) {
    baselines.push(doc);
    if (baselines.length >= batch) await dropBaselines();
  }
  if (baselines.length > 0) await dropBaselines();
}

/** Raises a live track's floor by its plan, deletes what falls below it, and its blobs no version names. */
async function trimTrack(db: Db, track: TrackDoc, limits: HistoryLimits, now: Date, blobs: Blobs, removed: Removed): Promise<void> {
  const { versions, tracks } = changeCollections(db);
  const latest = await latestVersion({ versions }, track);
  if (!latest) return;
  const cutoff = now.getTime() - limits.days * DAY_MS;
  let floor = Math.max(track.floor, latest.seq - limits.versions + 1);
  // A version replaced before the cutoff goes: the floor rises to each newer version fetched before it.
  while (floor < latest.seq) {
    const seqs = Array.from({ length: Math.min(WALK, latest.seq - floor) }, (_, k) => floor + 1 + k);
    const docs = (await versions.find({ _id: { $in: seqs.map((seq) => changeIds.version(track._id, track.gen, seq)) } }, { projection: { seq: 1, fetched_at: 1 } }).toArray()).sort((p, q) => p.seq - q.seq);
    let moved = false;
    for (const doc of docs) {
      if (doc.fetched_at.getTime() >= cutoff) break;
      floor = doc.seq;
      moved = true;
    }
    if (!moved || floor < (seqs[seqs.length - 1] ?? floor)) break;
  }
  for (let low = track.floor; low < floor; low += 500) {
    const ids = Array.from({ length: Math.min(500, floor - low) }, (_, k) => changeIds.version(track._id, track.gen, low + k));
    count(removed, 'change_versions', (await versions.deleteMany({ _id: { $in: ids } })).deletedCount);
  }
  const pendingBlobs = track.pending_blobs ?? [];
  if (floor === track.floor && pendingBlobs.length === 0) return;

  const owner = changeIds.owner(track._id, track.gen);
  const referenced = new Set<string>();
  for (let low = floor; low <= latest.seq; low += 500) {
    const ids = Array.from({ length: Math.min(500, latest.seq - low + 1) }, (_, k) => changeIds.version(track._id, track.gen, low + k));
    for (const doc of await versions.find({ _id: { $in: ids } }, { projection: { content: 1, markdown: 1 } }).toArray()) {
      referenced.add(doc.content.blob);
      referenced.add(doc.markdown.blob);
    }
  }
  const unreferenced = (await blobs.ofOwner(owner)).filter((blob) => !referenced.has(blob));
  const twice = new Set(pendingBlobs);
  const doomed = unreferenced.filter((blob) => twice.has(blob));
  count(removed, 'blob_chunks', await blobs.remove(owner, doomed));
  const left = unreferenced.filter((blob) => !twice.has(blob));
  await tracks.updateOne({ _id: track._id }, { $set: { floor, pending_blobs: left } });
}

/** Versions whose track (of that generation) is gone. */
async function sweepOrphanVersions(db: Db, batch: number, beat: () => void, removed: Removed): Promise<void> {
  const { versions, tracks } = changeCollections(db);
  let pending: string[] = [];
  const flush = async (): Promise<void> => {
    const owners = [...new Set(pending.map(ownerOfVersion))];
    const trackIds = [...new Set(owners.map((owner) => owner.slice(0, owner.lastIndexOf('|'))))];
    const living = new Set((await tracks.find({ _id: { $in: trackIds } }, { projection: { _id: 1, gen: 1 } }).toArray()).map((doc) => changeIds.owner(doc._id, doc.gen)));
    const orphans = pending.filter((id) => !living.has(ownerOfVersion(id)));
    if (orphans.length > 0) count(removed, 'change_versions', (await versions.deleteMany({ _id: { $in: orphans } })).deletedCount);
    pending = [];
    beat();
  };
  for await (const doc of versions.find({}, { projection: { _id: 1 }, batchSize: batch })) {
    pending.push(doc._id);
    if (pending.length >= batch) await flush();
  }
  if (pending.length > 0) await flush();
}

/** `<track>|<gen>|<seq>` → `<track>|<gen>`. */
const ownerOfVersion = (id: string): string => id.slice(0, id.lastIndexOf('|'));

/** Which change-tracking blob owners are alive: their record exists and names that generation (or crawl). */
export async function livingChangeOwners(db: Db, kind: Extract<BlobOwnerKind, 'change_track' | 'change_crawl'>, owners: string[]): Promise<Set<string>> {
  const split = owners.map((owner) => ({ owner, record: owner.slice(0, owner.lastIndexOf('|')), part: owner.slice(owner.lastIndexOf('|') + 1) }));
  const records = [...new Set(split.map((entry) => entry.record))];
  const { tracks, crawls } = changeCollections(db);
  const names =
    kind === 'change_track'
      ? new Map((await tracks.find({ _id: { $in: records } }, { projection: { _id: 1, gen: 1 } }).toArray()).map((doc) => [doc._id, doc.gen]))
      : new Map((await crawls.find({ _id: { $in: records } }, { projection: { _id: 1, crawl_id: 1 } }).toArray()).map((doc) => [doc._id, doc.crawl_id]));
  return new Set(split.filter((entry) => names.get(entry.record) === entry.part).map((entry) => entry.owner));
}
