/**
 * What a comparison ignored, counted by kind: masked runs that differed between lines with the same
 * key, and lines of blocks that did not count.
 */
import type { IgnoredRun, MaskedValue, NoiseKind } from './types';

export class IgnoredCounts {
  private readonly counts = new Map<NoiseKind, number>();

  add(kind: NoiseKind, count = 1): void {
    if (count > 0) this.counts.set(kind, (this.counts.get(kind) ?? 0) + count);
  }

  /** Masked runs of two lines with the same key that differ, kind by kind. */
  lines(previous: readonly MaskedValue[], current: readonly MaskedValue[]): void {
    if (previous === current || (previous.length === 0 && current.length === 0)) return;
    const count = Math.max(previous.length, current.length);
    let aligned = previous.length === current.length;
    for (let k = 0; aligned && k < count; k++) if ((previous[k] as MaskedValue).kind !== (current[k] as MaskedValue).kind) aligned = false;
    if (aligned) {
      for (let k = 0; k < count; k++) if ((previous[k] as MaskedValue).value !== (current[k] as MaskedValue).value) this.add((current[k] as MaskedValue).kind);
      return;
    }
    // Dropped parameters present on one side only: compare kind by kind.
    const byKind = (values: readonly MaskedValue[]): Map<NoiseKind, string[]> => {
      const map = new Map<NoiseKind, string[]>();
      for (const value of values) map.set(value.kind, [...(map.get(value.kind) ?? []), value.value]);
      return map;
    };
    const was = byKind(previous);
    const now = byKind(current);
    for (const kind of new Set([...was.keys(), ...now.keys()])) {
      const p = was.get(kind) ?? [];
      const c = now.get(kind) ?? [];
      let differing = Math.abs(p.length - c.length);
      for (let k = 0; k < Math.min(p.length, c.length); k++) if (p[k] !== c[k]) differing++;
      this.add(kind, differing);
    }
  }

  list(): IgnoredRun[] {
    return [...this.counts].map(([kind, count]) => ({ kind, count })).sort((p, q) => q.count - p.count || p.kind.localeCompare(q.kind));
  }
}
