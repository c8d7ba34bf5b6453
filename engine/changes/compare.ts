/**
 * A version against the one before it: `new`, `same` or `changed`, with the diff.
 *
 * ```
 * previous? ──no──▶ new
 *    │ fingerprints equal ──▶ same (unless fields changed); count the masked runs that differed
 *    ▼
 * align the lines' keys (myers.ts) ──▶ blocks of differing lines
 *    │ blank-only block ─────────────▶ ignored (layout)
 *    │ block between the anchors of a volatile region of the profile ──▶ ignored (learned)
 *    ▼
 * counted blocks ──▶ unified diff of the Markdown; status changed when any, or when a field changed
 * ```
 */
import { Anchors } from './anchors';
import { diffFields } from './fields';
import { align, DIFF_BUDGET } from './myers';
import { emptyProfile, regionKey, updateProfile, type LearningOptions } from './profile';
import { applyRegions, nonBlank } from './regions';
import type { ChangeDiff, Comparison, MaskedValue, NoiseProfile, RegionObservation, Snapshot } from './types';
import { IgnoredCounts } from './ignored';
import { redrawnRuns } from './redrawn';
import { unifiedDiff, type ShownBlock } from './unified';

export interface CompareOptions {
  /** The tracked URL's noise profile: its volatile regions do not count. */
  profile?: NoiseProfile;
  /** Structured outputs of both versions (css_extractor, extract or autoparse results), compared by field. */
  fields?: { previous: unknown; current: unknown };
  /** Names of the versions in the diff's header lines (times, version ids). */
  labels?: { previous: string; current: string };
  /** Context lines around each change (3). */
  context?: number;
  /** Size bound of `diff.text`, in characters (256 Ki). */
  maxDiffChars?: number;
  /** Work bound of the line alignment (myers.ts). */
  budget?: number;
}

/** Regions that changed beyond this many places: a redesign, nothing to learn noise from. */
export const MAX_OBSERVED_REGIONS = 32;

const DEFAULT_CONTEXT = 3;
const DEFAULT_MAX_DIFF_CHARS = 256 * 1024;

/** Observations of the profile's regions that did not change: held when both anchors are on the page. */
function heldRegions(profile: NoiseProfile | undefined, current: Snapshot, anchors: Anchors, changed: ReadonlySet<string>): RegionObservation[] {
  if (!profile || profile.regions.length === 0) return [];
  const present = anchors.all();
  return profile.regions
    .filter((region) => !changed.has(regionKey(region.before, region.after)) && present.has(region.before) && present.has(region.after))
    .map((region) => ({ before: region.before, after: region.after, state: 'held' as const }));
}

/** Why a block does not count, if it does not: blank lines only, or random runs drawn anew line for line. */
function ruledOut(previous: Snapshot, current: Snapshot, block: ShownBlock): { kind: 'layout' | 'token'; count: number } | undefined {
  const removed = block.aEnd - block.aStart;
  const added = block.bEnd - block.bStart;
  if (nonBlank(previous.keys, block.aStart, block.aEnd) + nonBlank(current.keys, block.bStart, block.bEnd) === 0) {
    return { kind: 'layout', count: removed + added };
  }
  if (removed !== added) return undefined;
  let runs = 0;
  for (let k = 0; k < removed; k++) {
    const found = redrawnRuns(previous.keys[block.aStart + k] as string, current.keys[block.bStart + k] as string);
    if (found < 0) return undefined;
    runs += found;
  }
  return { kind: 'token', count: runs };
}


/** Compares a version with the one before it (undefined: the URL's first version). */
export function compareSnapshots(previous: Snapshot | undefined, current: Snapshot, options: CompareOptions = {}): Comparison {
  if (!previous) return { status: 'new', observed: [] };
  const ignored = new IgnoredCounts();
  const fields = options.fields ? diffFields(options.fields.previous, options.fields.current) : { changes: {}, ignored: [] };
  for (const value of fields.ignored) ignored.add(value.kind);
  const fieldsChanged = Object.keys(fields.changes).length > 0;
  const anchors = new Anchors(current);

  if (previous.fingerprint === current.fingerprint) {
    // The non-blank keys are equal one for one: pair them in order.
    let j = 0;
    for (let i = 0; i < previous.keys.length; i++) {
      if (previous.keys[i] === '') continue;
      while (current.keys[j] === '') j++;
      ignored.lines(previous.values[i] as readonly MaskedValue[], current.values[j] as readonly MaskedValue[]);
      j++;
    }
    const diff: ChangeDiff = { text: '', fields: fields.changes, ignored: ignored.list(), added: 0, removed: 0 };
    return { status: fieldsChanged ? 'changed' : 'same', diff, observed: heldRegions(options.profile, current, anchors, new Set()) };
  }

  const ids = new Map<string, number>();
  const intern = (keys: readonly string[]): Int32Array => {
    const out = new Int32Array(keys.length);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      let id = ids.get(key);
      if (id === undefined) ids.set(key, (id = ids.size));
      out[i] = id;
    }
    return out;
  };
  const alignment = align(intern(previous.keys), intern(current.keys), options.budget ?? DIFF_BUDGET);
  const blocks: ShownBlock[] = alignment.blocks.map((block) => ({ ...block, counted: true }));

  // Equal lines: the masked runs that differed in them were ignored.
  let a = 0;
  let b = 0;
  for (const block of [...blocks, { aStart: previous.keys.length, aEnd: 0, bStart: current.keys.length, bEnd: 0 }]) {
    for (; a < block.aStart; a++, b++) ignored.lines(previous.values[a] as readonly MaskedValue[], current.values[b] as readonly MaskedValue[]);
    a = block.aEnd;
    b = block.bEnd;
  }

  // Blocks that change nothing a reader sees: blank lines only, or random runs drawn anew line for line.
  // Their lines are quiet: seen through when naming regions.
  const noise = { previous: new Uint8Array(previous.keys.length), current: new Uint8Array(current.keys.length) };
  for (const block of blocks) {
    const rule = ruledOut(previous, current, block);
    if (rule === undefined) continue;
    block.counted = false;
    ignored.add(rule.kind, rule.count);
    noise.previous.fill(1, block.aStart, block.aEnd);
    noise.current.fill(1, block.bStart, block.bEnd);
  }
  const regions = applyRegions(previous, current, blocks, noise, anchors, options.profile, ignored);
  const observed = regions.observed;
  const changedRegions = regions.changed;

  const counted = blocks.filter((block) => block.counted);
  const removed = counted.reduce((sum, block) => sum + nonBlank(previous.keys, block.aStart, block.aEnd), 0);
  const added = counted.reduce((sum, block) => sum + nonBlank(current.keys, block.bStart, block.bEnd), 0);
  const rendered = unifiedDiff(previous.lines, current.lines, blocks, {
    context: options.context ?? DEFAULT_CONTEXT,
    maxChars: options.maxDiffChars ?? DEFAULT_MAX_DIFF_CHARS,
    labels: options.labels ?? { previous: 'previous', current: 'current' },
  });
  const diff: ChangeDiff = {
    text: rendered.text,
    fields: fields.changes,
    ignored: ignored.list(),
    added,
    removed,
    ...(alignment.approximate ? { approximate: true as const } : {}),
    ...(rendered.truncated ? { truncated: true as const } : {}),
  };
  const learnable = observed.length <= MAX_OBSERVED_REGIONS;
  return {
    status: counted.length > 0 || fieldsChanged ? 'changed' : 'same',
    diff,
    observed: learnable ? [...observed, ...heldRegions(options.profile, current, anchors, changedRegions)] : [],
  };
}

/**
 * Learns noise from fetches of a URL made moments apart (two when it is first tracked; a third makes a
 * banner that rotates among a few texts likelier to be caught): whatever differs between consecutive
 * fetches is volatile at once.
 */
export function probeProfile(profile: NoiseProfile | undefined, fetches: readonly Snapshot[], options?: LearningOptions): NoiseProfile {
  let learned = profile ?? emptyProfile();
  for (let k = 1; k < fetches.length; k++) {
    const { observed } = compareSnapshots(fetches[k - 1], fetches[k] as Snapshot, { profile: learned, maxDiffChars: 0 });
    learned = updateProfile(learned, observed, { elapsedMs: 0, source: 'probe' }, options);
  }
  return learned;
}
