/**
 * The changed regions of a comparison, named for the noise profile, and the ones the profile knows to
 * be volatile taken out of the count.
 *
 * Counted blocks with nothing but quiet lines between them (blank, or ruled out as noise) are one
 * region, named by the nearest lines around it that are neither quiet nor changed (on the current
 * side: what the next comparison will see as the previous one). A region is ignored when the profile
 * knows it as volatile and it is no larger than the profile has seen it: a real paragraph added next to
 * a rotating banner makes the region larger, and counts. When a real edit right next to a volatile
 * region has changed one of its anchors, each block is also tried with the anchors it had in the
 * previous version, so the banner beside the edit is still ignored.
 */
import { Anchors, PAGE_END, PAGE_START } from './anchors';
import type { IgnoredCounts } from './ignored';
import { regionKey, volatileRegions } from './profile';
import type { NoiseProfile, RegionObservation, Snapshot } from './types';
import type { ShownBlock } from './unified';

/** Non-blank lines of `keys[start, end)`. */
export function nonBlank(keys: readonly string[], start: number, end: number): number {
  let count = 0;
  for (let i = start; i < end; i++) if (keys[i] !== '') count++;
  return count;
}

/** One side of a comparison: its snapshot, the anchors of its lines, and which lines are quiet. */
class Side {
  constructor(
    readonly snapshot: Snapshot,
    private readonly noise: Uint8Array,
    readonly anchors: Anchors = new Anchors(snapshot),
  ) {}

  quiet(line: number): boolean {
    return this.snapshot.keys[line] === '' || this.noise[line] === 1;
  }

  /** The anchors of the nearest loud lines before `start` and from `end` on. */
  around(start: number, end: number): { before: string; after: string } {
    let before = start - 1;
    while (before >= 0 && this.quiet(before)) before--;
    let after = end;
    while (after < this.snapshot.keys.length && this.quiet(after)) after++;
    return {
      before: before < 0 ? PAGE_START : this.anchors.of(before),
      after: after >= this.snapshot.keys.length ? PAGE_END : this.anchors.of(after),
    };
  }
}

export interface RegionsResult {
  observed: RegionObservation[];
  /** Keys of the regions observed changed (to tell which known regions held). */
  changed: Set<string>;
}

/**
 * Names the regions of the counted blocks, marks the ones the profile knows as volatile uncounted
 * (adding them to `ignored`), and answers what was observed.
 */
export function applyRegions(
  previous: Snapshot,
  current: Snapshot,
  blocks: readonly ShownBlock[],
  noise: { previous: Uint8Array; current: Uint8Array },
  anchors: Anchors,
  profile: NoiseProfile | undefined,
  ignored: IgnoredCounts,
): RegionsResult {
  const before = new Side(previous, noise.previous);
  const after = new Side(current, noise.current, anchors);
  const volatile = volatileRegions(profile);
  const observed: RegionObservation[] = [];
  const changed = new Set<string>();
  const size = (block: ShownBlock): number => Math.max(nonBlank(previous.keys, block.aStart, block.aEnd), nonBlank(current.keys, block.bStart, block.bEnd));
  const known = (name: { before: string; after: string }, lines: number): boolean => {
    const largest = volatile.get(regionKey(name.before, name.after));
    return largest !== undefined && lines <= largest;
  };
  const ignore = (block: ShownBlock): void => {
    block.counted = false;
    ignored.add('learned', size(block));
  };
  const live = blocks.filter((block) => block.counted);
  for (let first = 0; first < live.length; ) {
    let last = first;
    while (last + 1 < live.length && allQuiet(after, (live[last] as ShownBlock).bEnd, (live[last + 1] as ShownBlock).bStart)) last++;
    const group = live.slice(first, last + 1);
    first = last + 1;
    const name = after.around((group[0] as ShownBlock).bStart, (group[group.length - 1] as ShownBlock).bEnd);
    const lines = group.reduce((sum, block) => sum + size(block), 0);
    changed.add(regionKey(name.before, name.after));
    observed.push({ ...name, state: 'changed', lines });
    if (known(name, lines)) {
      group.forEach(ignore);
      continue;
    }
    // Block by block, with the anchors of either version: a banner beside an edited line.
    if (volatile.size === 0) continue;
    for (const block of group) {
      if (known(before.around(block.aStart, block.aEnd), size(block)) || known(after.around(block.bStart, block.bEnd), size(block))) ignore(block);
    }
  }
  return { observed, changed };
}

function allQuiet(side: Side, start: number, end: number): boolean {
  for (let j = start; j < end; j++) if (!side.quiet(j)) return false;
  return true;
}
