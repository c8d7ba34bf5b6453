/**
 * What names a history: the account, the URL's key (as crawls compare URLs: scheme, `www.`, a trailing
 * slash, tracking parameters and the fragment do not make two URLs) and an optional tag; and the
 * public id of a version, `v1.<url hash>.<generation>.<sequence>`, which says nothing of the account:
 * it is resolved against the caller's own, so another account's id is simply not found.
 */
import { urlKey } from '../crawls/urls';
import { changeIds, keyHash } from './store';

/** `change_tracking_tag`: up to 128 characters of letters, digits and `_ . : @ / + -`. */
export const TAG_PATTERN = '^[A-Za-z0-9_.:@/+-]{1,128}$';

export interface TrackKey {
  accountId: string;
  url: string;
  tag?: string;
}

export interface ResolvedKey {
  /** The track's `_id`. */
  id: string;
  hash: string;
  key: string;
  tag: string;
}

/** The track a URL (and tag) of an account is kept under; undefined for a URL that is not http(s). */
export function resolveKey(track: TrackKey): ResolvedKey | undefined {
  const key = urlKey(track.url);
  if (key === undefined) return undefined;
  const tag = track.tag ?? '';
  const hash = keyHash(key, tag);
  return { id: changeIds.track(track.accountId, hash), hash, key, tag };
}

export interface VersionRef {
  hash: string;
  gen: string;
  seq: number;
}

export const versionIdOf = (ref: VersionRef): string => `v1.${ref.hash}.${ref.gen}.${ref.seq}`;

/** A public version id read back, or undefined when it is not one. */
export function parseVersionId(raw: string): VersionRef | undefined {
  const parts = raw.split('.');
  if (parts.length !== 4 || parts[0] !== 'v1') return undefined;
  const [, hash, gen, seq] = parts as [string, string, string, string];
  if (!/^[0-9a-f]{32}$/.test(hash) || !/^[0-9a-z]{8}$/.test(gen) || !/^[1-9]\d{0,9}$/.test(seq)) return undefined;
  return { hash, gen, seq: Number(seq) };
}
