/**
 * The write path: a fetched page against the newest stored version of its URL.
 *
 *   track (read by _id, created on first sight) ─ head fingerprint equal (no fields asked)? ─▶ same:
 *     │                                              no blob read, no version, last_seen_at (a minute apart)
 *     ▼ else
 *   newest version (look-up of head, head+1, head+2 by _id: the head is a hint) ─▶ its Markdown blob
 *     ─▶ compareSnapshots (profile, fields) ─▶ same: profile and last_seen_at
 *                                            └▶ changed / new: blobs put (content-addressed), version
 *                                               seq+1 inserted (the unique _id is the compare-and-set: a
 *                                               loser reads the winner's version and compares again),
 *                                               head, profile
 *
 * `origin` names retried work (a crawl page, a Batch task): a second attempt that finds its own
 * version answers what the first stored instead of comparing the page with itself.
 */
import type { Db } from 'mongodb';
import { isDuplicateKey } from '../../base/db';
import { problem } from '../../base/errors';
import { compareSnapshots, type HtmlOutputs, emptyProfile, isNoiseProfile, probeProfile, RULES_REVISION, snapshotOf, updateProfile, type ChangeDiff, type ChangeStatus, type IgnoredRun, type NoiseKind, type NoiseProfile, type Page, type Snapshot } from '../../engine';
import { Blobs } from '../jobs/blobs';
import { comparedText, pack, pageOf, unpack, type Observation } from './content';
import { resolveKey, versionIdOf, type ResolvedKey, type TrackKey } from './keys';
import { changeCollections, changeIds, newGeneration, sha256, type ChangeCollections, type HeadHint, type TrackDoc, type VersionDoc } from './store';

/** Structured outputs compared field by field (css_extractor, extract, autoparse). */
export interface FieldSource {
  /** This fetch's output. */
  current: unknown;
  /** The same output computed from a stored version's page (null when it gives none). */
  previous(page: Page): unknown;
}

export interface RecordOptions {
  fields?: FieldSource;
  /** Retried work's name: its second attempt answers what the first stored. */
  origin?: string;
  /** Fetches of the page made moments apart, for a URL tracked for the first time: noise learned at once. */
  probe?: readonly Observation[];
  /** Size bound of `diff.text` (256 Ki characters). */
  maxDiffChars?: number;
}

/** A record whose track read has started (`ChangeRecorder.begin`). */
export interface PendingRecord {
  record(page: Observation, options?: RecordOptions): Promise<Recorded>;
}

export interface VersionMark {
  id: string;
  fetchedAt: Date;
}

export interface Recorded {
  status: ChangeStatus;
  /** The version that holds the page now: the one stored, or the one it is the same as. */
  version: VersionMark;
  /** The version it was compared with (absent when new). */
  previous?: VersionMark;
  /** Absent when new, and on a retried attempt that found its own version. */
  diff?: ChangeDiff;
  /** A version was written. */
  stored: boolean;
}

/** Versions raced for before giving up (each loss means another writer stored one). */
const MAX_RACES = 5;
/** `last_seen_at` of a page found the same is written at most this often (it is to the minute). */
const TOUCH_EVERY_MS = 60_000;
/** Versions looked at past the head hint in one read. */
const LOOK_AHEAD = 3;

export class ChangeRecorder {
  private readonly collections: ChangeCollections;
  private readonly blobs: Blobs;

  /** `outputs`: what converts a page to the Markdown it is compared on (content.ts). */
  constructor(
    db: Db,
    private readonly outputs: HtmlOutputs,
  ) {
    this.collections = changeCollections(db);
    this.blobs = new Blobs(db);
  }

  /** Records a page of a URL (and tag) of an account. */
  record(key: TrackKey, page: Observation, options: RecordOptions = {}): Promise<Recorded> {
    return this.begin(key).record(page, options);
  }

  /**
   * Starts reading a URL's track now, to record a page later (a Fetch starts it before the site is
   * asked, so the read costs the caller no time). A read that fails is reported by `record`.
   */
  begin(key: TrackKey): PendingRecord {
    const resolved = resolveKey(key);
    if (!resolved) throw problem('REQS004', 'Parameter "url" must be an http or https URL to track its changes.', { members: { parameter: 'url' } });
    const read = this.collections.tracks.findOne({ _id: resolved.id });
    // Handled here too: a Fetch that fails never records, and its read must not be an unhandled rejection.
    read.catch(() => undefined);
    return { record: (page, options = {}) => this.recordWith(key, resolved, read, page, options) };
  }

  /** `begin` for many URLs at once: one read of their tracks (a monitor's check takes its pages by the part). */
  beginMany(keys: readonly TrackKey[]): PendingRecord[] {
    const resolved = keys.map((key) => {
      const found = resolveKey(key);
      if (!found) throw problem('REQS004', 'Parameter "url" must be an http or https URL to track its changes.', { members: { parameter: 'url' } });
      return found;
    });
    const read = this.collections.tracks.find({ _id: { $in: resolved.map((one) => one.id) } }).toArray();
    read.catch(() => undefined);
    return keys.map((key, index) => {
      const one = resolved[index] as ResolvedKey;
      const mine = read.then((tracks) => tracks.find((track) => track._id === one.id) ?? null);
      mine.catch(() => undefined);
      return { record: (page, options = {}) => this.recordWith(key, one, mine, page, options) };
    });
  }

  private async recordWith(key: TrackKey, resolved: ResolvedKey, read: Promise<TrackDoc | null>, page: Observation, options: RecordOptions): Promise<Recorded> {
    const hash = sha256(page.body);
    const track = (await read) ?? (await this.track(key.accountId, key.url, resolved, page.fetchedAt));
    const { head } = track;
    if (head && options.origin !== undefined && head.origin === options.origin) return this.again(track, head);
    // The same bytes from the same address: the same page, fields included, without converting it.
    const identical = head?.content_hash === hash && head.final_url === page.finalUrl && head.http_status === page.status;
    const text = identical ? undefined : await comparedText(page, hash, this.outputs);
    const snapshot = text === undefined ? undefined : snapshotOf(text);
    if (head && (identical || (head.fingerprint === snapshot?.fingerprint && !options.fields))) {
      if (page.fetchedAt.getTime() - track.last_seen_at.getTime() >= TOUCH_EVERY_MS) {
        await this.collections.tracks.updateOne({ _id: track._id }, { $set: { last_seen_at: page.fetchedAt } });
      }
      const mark = this.mark(track, head.seq, head.fetched_at);
      return { status: 'same', version: mark, previous: mark, diff: { text: '', fields: {}, ignored: snapshot ? maskedRuns(snapshot) : [], added: 0, removed: 0 }, stored: false };
    }
    if (text === undefined || !snapshot) throw new Error('a page is converted unless it is identical to the head');

    let profile: NoiseProfile = isNoiseProfile(track.profile) ? track.profile : emptyProfile();
    for (let race = 0; race < MAX_RACES; race++) {
      const latest = await latestVersion(this.collections, track);
      if (latest && options.origin !== undefined && latest.origin === options.origin) {
        return this.again(track, { seq: latest.seq, fingerprint: latest.fingerprint, fetched_at: latest.fetched_at, status: latest.status });
      }
      if (!latest) {
        if (options.probe && options.probe.length > 0) profile = probeProfile(profile, [snapshot, ...(await Promise.all(options.probe.map(async (other) => snapshotOf(await comparedText(other, sha256(other.body), this.outputs)))))]);
        const seq = Math.max(1, track.floor);
        if (!(await this.store(track, seq, 'new', page, hash, text, snapshot, options.origin))) continue;
        await this.setHead(track, headFor(seq, 'new', snapshot, page, hash, options), page.fetchedAt, profile);
        return { status: 'new', version: this.mark(track, seq, page.fetchedAt), stored: true };
      }
      const previous = snapshotOf(await this.textOf(latest));
      const fields = options.fields ? { previous: await this.previousFields(latest, options.fields), current: options.fields.current } : undefined;
      const seq = latest.seq + 1;
      const comparison = compareSnapshots(previous, snapshot, {
        profile,
        ...(fields ? { fields } : {}),
        labels: { previous: label(track, latest.seq, latest.fetched_at), current: label(track, seq, page.fetchedAt) },
        ...(options.maxDiffChars !== undefined ? { maxDiffChars: options.maxDiffChars } : {}),
      });
      const learned = updateProfile(profile, comparison.observed, { elapsedMs: Math.max(0, page.fetchedAt.getTime() - track.last_seen_at.getTime()) });
      const before = this.mark(track, latest.seq, latest.fetched_at);
      if (comparison.status !== 'changed') {
        await this.setHead(track, headOf(latest), page.fetchedAt, learned);
        return { status: 'same', version: before, previous: before, ...(comparison.diff ? { diff: comparison.diff } : {}), stored: false };
      }
      if (!(await this.store(track, seq, 'changed', page, hash, text, snapshot, options.origin, comparison.diff))) continue;
      await this.setHead(track, headFor(seq, 'changed', snapshot, page, hash, options), page.fetchedAt, learned);
      return { status: 'changed', version: this.mark(track, seq, page.fetchedAt), previous: before, ...(comparison.diff ? { diff: comparison.diff } : {}), stored: true };
    }
    throw problem('service_unavailable', 'This URL’s history is being written by other requests at this very moment; retry in a second.', { headers: { 'Retry-After': '1' } });
  }

  /** The track of a URL, created on first sight (a concurrent creation wins and is read back). */
  private async track(accountId: string, url: string, resolved: ResolvedKey, at: Date): Promise<TrackDoc> {
    const { tracks } = this.collections;
    const found = await tracks.findOne({ _id: resolved.id });
    if (found) return found;
    const doc: TrackDoc = {
      _id: resolved.id,
      account: accountId,
      key: resolved.key,
      url,
      tag: resolved.tag,
      gen: newGeneration(),
      created_at: at,
      head: null,
      last_seen_at: at,
      floor: 1,
      profile: emptyProfile(),
    };
    try {
      await tracks.insertOne(doc);
      return doc;
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      const winner = await tracks.findOne({ _id: resolved.id });
      if (!winner) throw error;
      return winner;
    }
  }

  /** Stores a version: its blobs, then the version under its unique `_id`. False: another writer took `seq`. */
  private async store(
    track: TrackDoc,
    seq: number,
    status: 'new' | 'changed',
    page: Observation,
    hash: string,
    text: string,
    snapshot: Snapshot,
    originName: string | undefined,
    diff?: ChangeDiff,
  ): Promise<boolean> {
    const owner = { kind: 'change_track' as const, id: changeIds.owner(track._id, track.gen) };
    const textBytes = Buffer.from(text, 'utf8');
    const textHash = sha256(textBytes);
    const contentBlob = changeIds.content(track._id, track.gen, hash);
    const markdownBlob = changeIds.markdown(track._id, track.gen, textHash);
    const [packedBody, packedText] = await Promise.all([pack(page.body), pack(textBytes)]);
    // Content-addressed: bytes a version of this URL already stored are not stored again.
    await Promise.all([this.blobs.put(owner, contentBlob, packedBody), this.blobs.put(owner, markdownBlob, packedText)]);
    const doc: VersionDoc = {
      _id: changeIds.version(track._id, track.gen, seq),
      track: track._id,
      gen: track.gen,
      account: track.account,
      seq,
      status,
      fetched_at: page.fetchedAt,
      fingerprint: snapshot.fingerprint,
      rules_revision: RULES_REVISION,
      ...(originName !== undefined ? { origin: originName } : {}),
      content: {
        hash,
        blob: contentBlob,
        size: page.body.length,
        stored: packedBody.length,
        ...(page.rendered ? { content_type: 'text/html; charset=utf-8', rendered: true } : page.contentType ? { content_type: page.contentType } : {}),
        final_url: page.finalUrl,
        status: page.status,
        headers: JSON.stringify(page.headers ?? []),
        ...(page.configuration ? { configuration: page.configuration } : {}),
      },
      markdown: { hash: textHash, blob: markdownBlob, size: textBytes.length },
      ...(diff
        ? {
            diff: {
              added: diff.added,
              removed: diff.removed,
              fields: Object.keys(diff.fields).length,
              ignored: diff.ignored,
              ...(diff.approximate ? { approximate: true } : {}),
              ...(diff.truncated ? { truncated: true } : {}),
            },
          }
        : {}),
    };
    try {
      await this.collections.versions.insertOne(doc);
      return true;
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
    }
  }

  private async setHead(track: TrackDoc, head: HeadHint, seenAt: Date, profile: NoiseProfile): Promise<void> {
    await this.collections.tracks.updateOne({ _id: track._id }, { $set: { head, last_seen_at: seenAt, profile } });
  }

  /** The compared text of a stored version (its Markdown blob; its page again if that is gone). */
  private async textOf(version: VersionDoc): Promise<string> {
    const markdown = await this.blobs.read(version.markdown.blob);
    if (markdown) return (await unpack(markdown)).toString('utf8');
    const body = await this.bodyOf(version);
    if (!body) return '';
    const page = pageOf(version.content, body);
    return comparedText({ body, ...(page.contentType ? { contentType: page.contentType } : {}), ...(page.html !== undefined ? { html: page.html, rendered: true } : {}), finalUrl: page.finalUrl, status: page.status, fetchedAt: version.fetched_at }, version.content.hash, this.outputs);
  }

  private async bodyOf(version: VersionDoc): Promise<Buffer | undefined> {
    const packed = await this.blobs.read(version.content.blob);
    return packed ? unpack(packed) : undefined;
  }

  private async previousFields(version: VersionDoc, fields: FieldSource): Promise<unknown> {
    const body = await this.bodyOf(version);
    if (!body) return null;
    try {
      return await fields.previous(pageOf(version.content, body));
    } catch {
      // The old page gives no such output (an Extract kind it is not of): its fields are all absent.
      return null;
    }
  }

  private mark(track: TrackDoc, seq: number, fetchedAt: Date): VersionMark {
    return { id: versionIdOf({ hash: hashOf(track), gen: track.gen, seq }), fetchedAt };
  }

  /** What a retried attempt answers: the status its first attempt stored. */
  private again(track: TrackDoc, head: HeadHint): Recorded {
    return { status: head.status, version: this.mark(track, head.seq, head.fetched_at), stored: false };
  }
}

/**
 * What a page found the same at once (its masked text equal to the version's) left out: every volatile
 * run it has, by kind; the runs themselves were never compared.
 */
function maskedRuns(snapshot: Snapshot): IgnoredRun[] {
  const counts = new Map<NoiseKind, number>();
  for (const values of snapshot.values) for (const value of values) counts.set(value.kind, (counts.get(value.kind) ?? 0) + 1);
  return [...counts].map(([kind, count]) => ({ kind, count })).sort((p, q) => q.count - p.count || p.kind.localeCompare(q.kind));
}

const headFor = (seq: number, status: 'new' | 'changed', snapshot: Snapshot, page: Observation, hash: string, options: RecordOptions): HeadHint => ({
  seq,
  fingerprint: snapshot.fingerprint,
  fetched_at: page.fetchedAt,
  status,
  ...(options.origin !== undefined ? { origin: options.origin } : {}),
  content_hash: hash,
  final_url: page.finalUrl,
  http_status: page.status,
});

const hashOf = (track: Pick<TrackDoc, '_id'>): string => track._id.slice(track._id.lastIndexOf('|') + 1);

const label = (track: TrackDoc, seq: number, at: Date): string => `${versionIdOf({ hash: hashOf(track), gen: track.gen, seq })} ${at.toISOString()}`;

const headOf = (version: VersionDoc): HeadHint => ({
  seq: version.seq,
  fingerprint: version.fingerprint,
  fetched_at: version.fetched_at,
  status: version.status,
  ...(version.origin !== undefined ? { origin: version.origin } : {}),
  content_hash: version.content.hash,
  final_url: version.content.final_url,
  http_status: version.content.status,
});

/**
 * The newest stored version of a track's generation: the head hint and the few after it in one
 * look-up, again from the furthest found while the look-up comes back full.
 */
export async function latestVersion(collections: Pick<ChangeCollections, 'versions'>, track: Pick<TrackDoc, '_id' | 'gen' | 'head' | 'floor'>): Promise<VersionDoc | undefined> {
  let from = Math.max(track.head?.seq ?? 0, track.floor - 1, 0);
  let best: VersionDoc | undefined;
  for (;;) {
    const seqs = Array.from({ length: LOOK_AHEAD }, (_, k) => from + k).filter((seq) => seq >= 1);
    const found = await collections.versions.find({ _id: { $in: seqs.map((seq) => changeIds.version(track._id, track.gen, seq)) } }).toArray();
    for (const doc of found) if (!best || doc.seq > best.seq) best = doc;
    if (!best || best.seq < from + LOOK_AHEAD - 1) return best;
    from = best.seq;
  }
}

export { hashOf as trackHashOf };
