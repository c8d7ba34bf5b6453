/**
 * Names of lines that stay put, for the noise profile: a 53-bit hash of the line's key and which
 * occurrence of that key it is on the page ("Share" may be on it ten times). Deterministic across
 * processes and versions, short enough to store (at most 15 characters).
 */
import type { Snapshot } from './types';

export const PAGE_START = '^';
export const PAGE_END = '$';

/** A 53-bit string hash: two FNV-1a style lanes with different multipliers, each finished by an avalanche step; base 36. */
export function hash53(text: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x9747b28c;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 15), 0x85ebca6b);
  h1 ^= h1 >>> 13;
  h2 = Math.imul(h2 ^ (h2 >>> 16), 0xc2b2ae35);
  h2 ^= h2 >>> 15;
  return ((h2 & 0x1fffff) * 0x100000000 + (h1 >>> 0)).toString(36);
}

/** Anchor names of a snapshot's lines, computed once per comparison that needs them. */
export class Anchors {
  private occurrences: Int32Array | undefined;

  constructor(private readonly snapshot: Snapshot) {}

  /** The anchor of line `index` (a non-blank line). */
  of(index: number): string {
    if (index < 0) return PAGE_START;
    if (index >= this.snapshot.keys.length) return PAGE_END;
    const key = this.snapshot.keys[index] as string;
    return `${hash53(key)}.${this.occurrence(index)}`;
  }

  /** Every anchor on the page. */
  all(): Set<string> {
    const names = new Set<string>([PAGE_START, PAGE_END]);
    const keys = this.snapshot.keys;
    for (let i = 0; i < keys.length; i++) if (keys[i] !== '') names.add(this.of(i));
    return names;
  }

  private occurrence(index: number): number {
    if (!this.occurrences) {
      const seen = new Map<string, number>();
      const keys = this.snapshot.keys;
      this.occurrences = new Int32Array(keys.length);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i] as string;
        if (key === '') continue;
        const count = seen.get(key) ?? 0;
        this.occurrences[i] = count;
        seen.set(key, count + 1);
      }
    }
    return this.occurrences[index] as number;
  }
}
