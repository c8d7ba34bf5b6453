/**
 * The shapes of change tracking: what a page is reduced to for comparison (a snapshot), what a
 * comparison says (status and diff), and what is learned per tracked URL (the noise profile).
 */

/** What a run of page text left out of the comparison was. */
export type NoiseKind =
  /** Dates, times, "5 minutes ago", epoch seconds. */
  | 'timestamp'
  | 'uuid'
  /** Hexadecimal runs (hashes, build ids, request ids without a label). */
  | 'hex'
  /** Base64-like random runs (CSRF tokens, nonces, session ids). */
  | 'token'
  /** The value after a label such as "Request ID:", "Ray ID", "served by". */
  | 'request_id'
  /** Traffic counters: "1,234 views", "Visitors: 12", "37 users online". */
  | 'counter'
  /** "generated in 0.12 s", "took 45 ms". */
  | 'duration'
  /** A cache-busting query parameter's value in a link or image URL (`?v=…`, `?_=…`). */
  | 'cache_buster'
  /** A tracking or session parameter dropped from a URL (`utm_*`, `gclid`, `sid`, `jsessionid`). */
  | 'tracking'
  /** A region of the page learned to change on every render (see the noise profile). */
  | 'learned'
  /** Blank lines added or removed. */
  | 'layout';

export interface MaskedValue {
  kind: NoiseKind;
  value: string;
}

/** A page reduced for comparison: its Markdown lines and each line's key with volatile runs masked. */
export interface Snapshot {
  /** The Markdown, split on line breaks. */
  readonly lines: readonly string[];
  /** Per line: the text compared ('' for a blank line). */
  readonly keys: readonly string[];
  /** Per line: the volatile runs the key masks, in order. */
  readonly values: ReadonlyArray<readonly MaskedValue[]>;
  /**
   * `c<rules revision>:<sha-256 hex>` of the non-blank keys: two snapshots with the same fingerprint
   * compare `same` (before learned noise, which can only make more of a page the same).
   */
  readonly fingerprint: string;
}

export type ChangeStatus = 'new' | 'same' | 'changed';

export interface FieldChange {
  /** `null` when the field is not in that version. */
  previous: unknown;
  current: unknown;
}

export interface IgnoredRun {
  kind: NoiseKind;
  /** Values that differed between the versions (lines, for `learned` and `layout`). */
  count: number;
}

export interface ChangeDiff {
  /** Unified diff of the Markdown (previous → current), only the changes that count; '' when same. */
  text: string;
  /** Structured outputs compared field by field (dotted names); empty when none changed or none given. */
  fields: Record<string, FieldChange>;
  /** What differed but did not count, by kind. */
  ignored: IgnoredRun[];
  /** Lines that count, added and removed. */
  added: number;
  removed: number;
  /** The line alignment hit its work bound somewhere: changes are all there, their pairing is coarser. */
  approximate?: true;
  /** `text` stopped at the size bound; `added`/`removed` still count everything. */
  truncated?: true;
}

/** What a comparison saw of one region of the page, for the noise profile. */
export interface RegionObservation {
  /** Anchors: the stable lines around the region (`^` and `$` for the page's ends). */
  before: string;
  after: string;
  /** `changed`: the region differed; `held`: a known region whose anchors are there with nothing between them changed. */
  state: 'changed' | 'held';
  /** For `changed`: its non-blank lines (the larger of the two versions' counts, block by block). */
  lines?: number;
}

export interface Comparison {
  status: ChangeStatus;
  /** Absent when `new`. */
  diff?: ChangeDiff;
  /** Input to `updateProfile`; empty when the page changed too much to learn from (a redesign). */
  observed: RegionObservation[];
}

/** A region of a tracked page that changes on its own (a rotating banner, a random pick of items). */
export interface NoiseRegion {
  before: string;
  after: string;
  /** Consecutive comparisons (within the learning window) in which it changed. */
  changes: number;
  /** Consecutive comparisons in which it held. */
  holds: number;
  /** Ignored from now on (when no larger than `lines`). */
  volatile: boolean;
  /** The most non-blank lines it has been seen to span. */
  lines: number;
  /** How it was learned: two fetches moments apart, or the URL's history. */
  source: 'probe' | 'history';
  /** The profile's comparison count when it was last observed (eviction order). */
  seen: number;
}

/** Serialisable, small (at most MAX_REGIONS regions), kept with a tracked URL's history. */
export interface NoiseProfile {
  v: 1;
  /** Comparisons folded in. */
  comparisons: number;
  regions: NoiseRegion[];
}
