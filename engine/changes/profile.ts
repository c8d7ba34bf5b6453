/**
 * The noise profile of a tracked URL: regions of its page that change on their own, learned without a
 * model from how versions differed.
 *
 * A region is named by its anchors, the stable lines around it (a line's key hash and which
 * occurrence of that key it is; `^` and `$` for the page's ends), so it is recognised again wherever
 * the page puts it. Two ways in:
 * - **probe**: two fetches moments apart (when a URL is first tracked) that differ can only differ by
 *   noise, so every region that changed between them is volatile at once;
 * - **history**: a region that changed in `learnAfter` consecutive comparisons, each within
 *   `windowMs` of the version before, while the lines around it held. Changes seen across longer
 *   intervals neither teach nor unteach: a price checked daily that moves each day is news, not noise.
 *
 * A volatile region that then holds for `forgetAfter` consecutive comparisons is forgotten. Learned
 * regions apply to the Markdown only: structured fields (css_extractor, extract, autoparse) are what
 * the caller pointed at, so they are never silenced by learning.
 */
import type { NoiseProfile, NoiseRegion, RegionObservation } from './types';

/** Regions kept per profile: the profile stays a few kilobytes. */
export const MAX_REGIONS = 64;
/** Comparisons after which a volatile region whose anchors are gone is forgotten. */
export const STALE_AFTER = 100;

export interface LearningOptions {
  /** Consecutive changes (within the window) that make a region volatile from history. */
  learnAfter: number;
  /** Consecutive holds that make a volatile region ordinary again. */
  forgetAfter: number;
  /** Longest interval between two versions whose difference can teach noise. */
  windowMs: number;
}

export const LEARNING_DEFAULTS: LearningOptions = { learnAfter: 4, forgetAfter: 5, windowMs: 60 * 60 * 1000 };

export const emptyProfile = (): NoiseProfile => ({ v: 1, comparisons: 0, regions: [] });

const regionKey = (before: string, after: string): string => `${before}\n${after}`;

/** The volatile regions of a profile, by `before\nafter`, with the most lines each has spanned. */
export function volatileRegions(profile: NoiseProfile | undefined): Map<string, number> {
  const regions = new Map<string, number>();
  for (const region of profile?.regions ?? []) if (region.volatile) regions.set(regionKey(region.before, region.after), region.lines);
  return regions;
}

export { regionKey };

/** Whether a stored value is a profile this code can read (anything else starts a new one). */
export function isNoiseProfile(value: unknown): value is NoiseProfile {
  if (typeof value !== 'object' || value === null) return false;
  const profile = value as Partial<NoiseProfile>;
  if (profile.v !== 1 || typeof profile.comparisons !== 'number' || !Array.isArray(profile.regions) || profile.regions.length > MAX_REGIONS) return false;
  return profile.regions.every(
    (region: Partial<NoiseRegion>) =>
      typeof region === 'object' &&
      region !== null &&
      typeof region.before === 'string' &&
      typeof region.after === 'string' &&
      region.before.length <= 64 &&
      region.after.length <= 64 &&
      typeof region.changes === 'number' &&
      typeof region.holds === 'number' &&
      typeof region.lines === 'number' &&
      typeof region.volatile === 'boolean' &&
      (region.source === 'probe' || region.source === 'history') &&
      typeof region.seen === 'number',
  );
}

export interface ObservationContext {
  /** Time between the two versions compared. */
  elapsedMs: number;
  /** `probe`: the two versions are fetches moments apart made to learn noise. */
  source?: 'probe' | 'history';
}

/** The profile after one more comparison; the given profile is left as it was. */
export function updateProfile(
  profile: NoiseProfile | undefined,
  observed: readonly RegionObservation[],
  context: ObservationContext,
  options: LearningOptions = LEARNING_DEFAULTS,
): NoiseProfile {
  const comparisons = (profile?.comparisons ?? 0) + 1;
  const regions = new Map<string, NoiseRegion>();
  for (const region of profile?.regions ?? []) regions.set(regionKey(region.before, region.after), { ...region });
  const probe = context.source === 'probe';
  const teaches = probe || context.elapsedMs <= options.windowMs;
  for (const observation of observed) {
    const key = regionKey(observation.before, observation.after);
    const region = regions.get(key);
    if (observation.state === 'changed') {
      if (!region) {
        if (teaches) {
          regions.set(key, {
            before: observation.before,
            after: observation.after,
            changes: 1,
            holds: 0,
            lines: observation.lines ?? 1,
            volatile: probe || options.learnAfter <= 1,
            source: probe ? 'probe' : 'history',
            seen: comparisons,
          });
        }
        continue;
      }
      region.holds = 0;
      region.seen = comparisons;
      if (!teaches) continue;
      region.lines = Math.max(region.lines, observation.lines ?? 1);
      region.changes += 1;
      if (probe) {
        region.volatile = true;
        region.source = 'probe';
      } else if (region.changes >= options.learnAfter) region.volatile = true;
      continue;
    }
    if (!region) continue;
    region.seen = comparisons;
    if (!region.volatile) {
      // The streak is broken: it is not a region that changes on every render.
      regions.delete(key);
      continue;
    }
    region.holds += 1;
    if (region.holds >= options.forgetAfter) regions.delete(key);
  }
  // Candidates not seen changing for a while are dropped, volatile regions whose anchors left the page
  // long ago too; past the cap, the least recently seen go.
  const kept = [...regions.values()].filter((region) => comparisons - region.seen <= (region.volatile ? STALE_AFTER : 2 * options.learnAfter));
  kept.sort((p, q) => Number(q.volatile) - Number(p.volatile) || q.seen - p.seen);
  return { v: 1, comparisons, regions: kept.slice(0, MAX_REGIONS) };
}
