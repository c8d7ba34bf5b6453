/**
 * Where change tracking lives in MongoDB, shaped for FerretDB: every hot read is a look-up by an `_id`
 * the reader computes, versions are only ever inserted, and the bytes are blobs of the kernel's blob
 * store (core/jobs/blobs.ts).
 *
 * | collection       | one document per                                   | `_id`                                  |
 * |------------------|----------------------------------------------------|----------------------------------------|
 * | change_tracks    | tracked URL of an account (and tag): head, profile | `<account>\|<sha256(key\ntag)[0..32]>`   |
 * | change_versions  | stored version (insert-only)                       | `<track>\|<gen>\|<seq, 10 digits>`      |
 * | change_crawls    | start URL (and tag) of tracked crawls: baseline    | `<account>\|<sha256(key\ntag)[0..32]>`   |
 *
 * A track's `gen` is drawn when the track is created: deleting a history removes the track document at
 * once, and the versions and blobs of that generation are orphans whatever comes next (a URL tracked
 * again starts a new generation, never meets the old versions), removed by the retention sweep.
 *
 * Blobs (owner `change_track`, `<track>|<gen>`): `chv|<track>|<gen>|<sha256 of the bytes>` the page as
 * fetched, `chm|<track>|<gen>|<sha256 of the Markdown>` its Markdown, both brotli-compressed and
 * content-addressed: identical bytes of a URL are stored once. A tracked crawl's URL set is a blob of
 * owner `change_crawl` (`<record>|<crawl id>`).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import type { IndexRegistration } from '../../base/db';
import type { NoiseKind, NoiseProfile } from '../../engine';

export interface HeadHint {
  seq: number;
  fingerprint: string;
  fetched_at: Date;
  status: 'new' | 'changed';
  /** The retried work that stored it (a crawl page, a Batch task), when any. */
  origin?: string;
  /** sha-256 of its bytes, its final URL and HTTP status: a page answered with the same is the same without converting it. */
  content_hash?: string;
  final_url?: string;
  http_status?: number;
}

export interface TrackDoc {
  _id: string;
  account: string;
  /** The URL key (core/crawls/urls.ts `urlKey`). */
  key: string;
  /** The URL as first tracked. */
  url: string;
  /** `''` when untagged. */
  tag: string;
  gen: string;
  created_at: Date;
  /**
   * The newest version as its writer last saw it. A hint: FerretDB's updates are not atomic, so a
   * concurrent write may set an older one; writers and readers look past it (`latestVersion`).
   */
  head: HeadHint | null;
  /** The last fetch that found this URL, whatever it found. */
  last_seen_at: Date;
  /** Versions below this sequence number are removed (retention). */
  floor: number;
  profile: NoiseProfile;
  /** Blobs the last retention sweep found unreferenced: removed by the next one if still so. */
  pending_blobs?: string[];
}

export interface StoredContent {
  /** sha-256 (hex) of the bytes as fetched. */
  hash: string;
  blob: string;
  /** Bytes as fetched, and as stored (compressed). */
  size: number;
  stored: number;
  content_type?: string;
  final_url: string;
  /** The target's HTTP status. */
  status: number;
  /** The target's response headers, as JSON `[[name, value], ...]` (FerretDB stores no nested arrays). */
  headers: string;
  /** The configuration that fetched it (rung id). */
  configuration?: string;
  /** A browser rendered it: the bytes are the rendered HTML as UTF-8. */
  rendered?: boolean;
}

export interface VersionDoc {
  _id: string;
  track: string;
  gen: string;
  account: string;
  seq: number;
  status: 'new' | 'changed';
  fetched_at: Date;
  fingerprint: string;
  rules_revision: number;
  origin?: string;
  content: StoredContent;
  markdown: { hash: string; blob: string; size: number };
  /** What the comparison with the version before said (absent on the first). */
  diff?: { added: number; removed: number; fields: number; ignored: Array<{ kind: NoiseKind; count: number }>; approximate?: boolean; truncated?: boolean };
}

export interface CrawlBaselineDoc {
  _id: string;
  account: string;
  key: string;
  url: string;
  tag: string;
  /** The last tracked crawl of this start URL that ran out of pages to open, and its URL set. */
  crawl_id: string;
  blob: string;
  urls: number;
  at: Date;
}

export const CHANGE_INDEXES: IndexRegistration = {
  change_tracks: [{ key: { account: 1 }, name: 'account' }],
  change_crawls: [{ key: { account: 1 }, name: 'account' }],
};

export interface ChangeCollections {
  tracks: Collection<TrackDoc>;
  versions: Collection<VersionDoc>;
  crawls: Collection<CrawlBaselineDoc>;
}

export function changeCollections(db: Db): ChangeCollections {
  return {
    tracks: db.collection<TrackDoc>('change_tracks'),
    versions: db.collection<VersionDoc>('change_versions'),
    crawls: db.collection<CrawlBaselineDoc>('change_crawls'),
  };
}

const SEQ_DIGITS = 10;

/** The hash that names a URL (and tag) of an account: 32 hex characters. */
export const keyHash = (key: string, tag: string): string => createHash('sha256').update(`${key}\n${tag}`).digest('hex').slice(0, 32);

export const changeIds = {
  track: (account: string, hash: string): string => `${account}|${hash}`,
  version: (track: string, gen: string, seq: number): string => `${track}|${gen}|${String(seq).padStart(SEQ_DIGITS, '0')}`,
  /** Blob owner of a track's generation. */
  owner: (track: string, gen: string): string => `${track}|${gen}`,
  content: (track: string, gen: string, hash: string): string => `chv|${track}|${gen}|${hash}`,
  markdown: (track: string, gen: string, hash: string): string => `chm|${track}|${gen}|${hash}`,
  crawlOwner: (record: string, crawlId: string): string => `${record}|${crawlId}`,
  crawlSet: (record: string, crawlId: string): string => `chc|${record}|${crawlId}`,
};

/** A new generation: 8 random base-36 characters. */
export const newGeneration = (): string => BigInt(`0x${randomBytes(6).toString('hex')}`).toString(36).padStart(8, '0').slice(-8);

export const sha256 = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');
