/**
 * The read path: an account's versions of a URL, newest first, the version current at a time or named
 * by its id, a version's bytes, and deletion.
 *
 * What is visible follows the account's plan now (`history_versions`, `history_days`): the newest
 * `history_versions` versions, of which those replaced by a newer one more than `history_days` ago
 * are gone, and nothing of a URL no fetch tracked for `history_days`. The retention sweep removes the
 * same documents later (retention.ts); readers never depend on it having run, nor on it not having
 * run: a version in the visible range that is missing is skipped.
 */
import type { Db } from 'mongodb';
import { Blobs } from '../jobs/blobs';
import { unpack } from './content';
import { parseVersionId, resolveKey, versionIdOf, type TrackKey } from './keys';
import { latestVersion, trackHashOf } from './record';
import { changeCollections, changeIds, type ChangeCollections, type TrackDoc, type VersionDoc } from './store';

export interface HistoryLimits {
  /** Versions kept per URL (at least 1). */
  versions: number;
  /** Days a replaced version, or a URL no longer tracked, is kept. */
  days: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** The plan's history limits (ACCOUNT_LIMITS, PLAN_LIMITS: `history_versions`, `history_days`). */
export const historyLimits = (principal: { plan: { limits: { historyVersions: number; historyDays: number } } }): HistoryLimits => ({
  versions: Math.max(1, principal.plan.limits.historyVersions),
  days: principal.plan.limits.historyDays,
});

/** Documents read per look-up while walking a history. */
const WALK = 32;
/** Tracks whose versions and blobs one deletion removes at once; the rest go with the next retention sweep. */
const DELETE_NOW = 1_000;

/** A version as readers see it, with the neighbours that say how long it was current. */
export interface VersionEntry {
  id: string;
  doc: VersionDoc;
  /** When a newer version replaced it (absent: it is the newest). */
  replacedAt?: Date;
  /** For the newest: the last fetch that found the page so. */
  lastSeenAt?: Date;
}

export interface HistoryPage {
  track: TrackDoc;
  entries: VersionEntry[];
  /** Where the next page starts (a sequence number), absent on the last. */
  next?: number;
}

export type AsOf = { kind: 'time'; at: Date } | { kind: 'version'; id: string };

export class ChangeHistory {
  private readonly collections: ChangeCollections;
  private readonly blobs: Blobs;

  constructor(
    db: Db,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.collections = changeCollections(db);
    this.blobs = new Blobs(db);
  }

  /** The live track of a URL (and tag) of an account, with its newest version; undefined when there is none to show. */
  private async open(key: TrackKey, limits: HistoryLimits): Promise<{ track: TrackDoc; latest: VersionDoc } | undefined> {
    const resolved = resolveKey(key);
    if (!resolved) return undefined;
    return this.openById(resolved.id, limits);
  }

  private async openById(trackId: string, limits: HistoryLimits, gen?: string): Promise<{ track: TrackDoc; latest: VersionDoc } | undefined> {
    const track = await this.collections.tracks.findOne({ _id: trackId });
    if (!track || (gen !== undefined && track.gen !== gen)) return undefined;
    if (track.last_seen_at.getTime() < this.cutoff(limits)) return undefined;
    const latest = await latestVersion(this.collections, track);
    return latest ? { track, latest } : undefined;
  }

  private cutoff(limits: HistoryLimits): number {
    return this.now().getTime() - limits.days * DAY_MS;
  }

  /** The lowest sequence number the plan still shows. */
  private floorOf(track: TrackDoc, latest: VersionDoc, limits: HistoryLimits): number {
    return Math.max(track.floor, latest.seq - Math.max(1, limits.versions) + 1, 1);
  }

  /**
   * Versions from `from` down (newest first), up to `limit`, with when each was replaced; stops at
   * the first one replaced before the days limit (all older ones were too).
   */
  private async walk(track: TrackDoc, latest: VersionDoc, limits: HistoryLimits, from: number, limit: number, until?: (entry: VersionEntry) => boolean): Promise<{ entries: VersionEntry[]; next?: number }> {
    const floor = this.floorOf(track, latest, limits);
    const cutoff = this.cutoff(limits);
    const entries: VersionEntry[] = [];
    let seq = Math.min(from, latest.seq);
    // What replaced the version at `seq`: the one above it (read with the first batch).
    let above: VersionDoc | undefined = seq < latest.seq ? undefined : latest;
    let needAbove = seq < latest.seq;
    while (seq >= floor && entries.length < limit) {
      const low = Math.max(floor, seq - WALK + 1);
      const wanted = Array.from({ length: seq - low + 1 + (needAbove ? 1 : 0) }, (_, k) => seq + (needAbove ? 1 : 0) - k);
      const docs = new Map((await this.collections.versions.find({ _id: { $in: wanted.map((n) => changeIds.version(track._id, track.gen, n)) } }).toArray()).map((doc) => [doc.seq, doc]));
      if (needAbove) {
        above = docs.get(seq + 1);
        needAbove = false;
      }
      for (; seq >= low && entries.length < limit; seq--) {
        const doc = docs.get(seq);
        if (!doc) continue;
        const replacedAt = doc.seq === latest.seq ? undefined : above?.fetched_at;
        if (replacedAt !== undefined && replacedAt.getTime() < cutoff) return { entries };
        const entry: VersionEntry = {
          id: versionIdOf({ hash: trackHashOf(track), gen: track.gen, seq: doc.seq }),
          doc,
          ...(replacedAt ? { replacedAt } : {}),
          ...(doc.seq === latest.seq ? { lastSeenAt: track.last_seen_at > doc.fetched_at ? track.last_seen_at : doc.fetched_at } : {}),
        };
        above = doc;
        entries.push(entry);
        if (until?.(entry)) return { entries };
      }
    }
    return { entries, ...(seq >= floor ? { next: seq } : {}) };
  }

  /** A page of a URL's versions, newest first, from sequence `from` (the cursor's) down. */
  async list(key: TrackKey, limits: HistoryLimits, from: number | undefined, limit: number): Promise<HistoryPage | undefined> {
    const opened = await this.open(key, limits);
    if (!opened) return undefined;
    const { entries, next } = await this.walk(opened.track, opened.latest, limits, from ?? opened.latest.seq, limit);
    return { track: opened.track, entries, ...(next !== undefined ? { next } : {}) };
  }

  /** The version current at a time (the newest fetched at or before it), or named by id; undefined when none is kept. */
  async at(key: TrackKey, limits: HistoryLimits, asOf: AsOf): Promise<{ track: TrackDoc; entry: VersionEntry } | undefined> {
    if (asOf.kind === 'version') return this.byId(key, limits, asOf.id);
    const opened = await this.open(key, limits);
    if (!opened) return undefined;
    const at = asOf.at.getTime();
    // The newest version is current from its fetch on: no walk for a time after it.
    if (opened.latest.fetched_at.getTime() <= at) {
      const { track, latest } = opened;
      return { track, entry: { id: versionIdOf({ hash: trackHashOf(track), gen: track.gen, seq: latest.seq }), doc: latest, lastSeenAt: track.last_seen_at > latest.fetched_at ? track.last_seen_at : latest.fetched_at } };
    }
    const { entries } = await this.walk(opened.track, opened.latest, limits, opened.latest.seq, Number.MAX_SAFE_INTEGER, (entry) => entry.doc.fetched_at.getTime() <= at);
    const entry = entries[entries.length - 1];
    return entry && entry.doc.fetched_at.getTime() <= at ? { track: opened.track, entry } : undefined;
  }

  /** A version by its id: the track, then the version and the one after it (when it was replaced) in one look-up. */
  private async byId(key: TrackKey, limits: HistoryLimits, id: string): Promise<{ track: TrackDoc; entry: VersionEntry } | undefined> {
    const ref = parseVersionId(id);
    const resolved = resolveKey(key);
    if (!ref || !resolved || ref.hash !== resolved.hash) return undefined;
    const track = await this.collections.tracks.findOne({ _id: resolved.id });
    if (!track || track.gen !== ref.gen || track.last_seen_at.getTime() < this.cutoff(limits) || ref.seq < track.floor) return undefined;
    const docs = await this.collections.versions.find({ _id: { $in: [ref.seq, ref.seq + 1, ref.seq + 2].map((seq) => changeIds.version(track._id, track.gen, seq)) } }).toArray();
    const doc = docs.find((candidate) => candidate.seq === ref.seq);
    const next = docs.filter((candidate) => candidate.seq > ref.seq).sort((p, q) => p.seq - q.seq)[0];
    if (!doc) return undefined;
    // Newer versions than the look-up saw: the newest one tells how many the plan still shows.
    const newest = next && docs.some((candidate) => candidate.seq === ref.seq + 2) ? await latestVersion(this.collections, track) : (next ?? doc);
    if (!newest || doc.seq < this.floorOf(track, newest, limits)) return undefined;
    if (next && next.fetched_at.getTime() < this.cutoff(limits)) return undefined;
    const entry: VersionEntry = {
      id,
      doc,
      ...(next ? { replacedAt: next.fetched_at } : { lastSeenAt: track.last_seen_at > doc.fetched_at ? track.last_seen_at : doc.fetched_at }),
    };
    return { track, entry };
  }

  /** The oldest version the plan still shows (for a refusal's detail). */
  async oldest(key: TrackKey, limits: HistoryLimits): Promise<Date | undefined> {
    const opened = await this.open(key, limits);
    if (!opened) return undefined;
    const { entries } = await this.walk(opened.track, opened.latest, limits, opened.latest.seq, Number.MAX_SAFE_INTEGER);
    return entries[entries.length - 1]?.doc.fetched_at;
  }

  /** A version's bytes as fetched; undefined when its blob is gone. */
  async body(version: VersionDoc): Promise<Buffer | undefined> {
    const packed = await this.blobs.read(version.content.blob);
    return packed ? unpack(packed) : undefined;
  }

  /**
   * Deletes an account's history: of one URL (untagged, or under one tag), or all of it. The tracks go first
   * (nothing reads as kept from then on), then their versions and blobs, at once for the first
   * DELETE_NOW tracks and by the next retention sweep for the rest. Answers the URLs (tracks) deleted.
   */
  async remove(accountId: string, scope: { url?: string; tag?: string }): Promise<number> {
    const { tracks, versions } = this.collections;
    let filter: Record<string, unknown> = { account: accountId };
    if (scope.url !== undefined) {
      const resolved = resolveKey({ accountId, url: scope.url, ...(scope.tag !== undefined ? { tag: scope.tag } : {}) });
      if (!resolved) return 0;
      filter = { _id: resolved.id };
    }
    // All of it: the baselines of the account's tracked crawls too (their URL sets become orphans).
    if (scope.url === undefined) await this.collections.crawls.deleteMany({ account: accountId });
    const doomed = await tracks.find(filter, { projection: { _id: 1, gen: 1, head: 1, floor: 1 } }).toArray();
    if (doomed.length === 0) return 0;
    await tracks.deleteMany({ _id: { $in: doomed.map((track) => track._id) } });
    for (const track of doomed.slice(0, DELETE_NOW)) {
      const top = (await latestVersion(this.collections, track))?.seq ?? 0;
      for (let low = Math.max(1, track.floor); low <= top; low += 500) {
        const ids = Array.from({ length: Math.min(500, top - low + 1) }, (_, k) => changeIds.version(track._id, track.gen, low + k));
        await versions.deleteMany({ _id: { $in: ids } });
      }
      await this.blobs.removeOwners([changeIds.owner(track._id, track.gen)]);
    }
    return doomed.length;
  }
}
