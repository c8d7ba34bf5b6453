/**
 * The unified diff of two versions' Markdown (the format of `diff -u`), showing the blocks that count.
 * A block that did not count (learned noise, blank lines) is shown too when it falls within a hunk's
 * context, as removed and added lines: context lines must be equal in both versions for the hunk's
 * line numbers to hold. Context lines are the current version's. Output stops near `maxChars`.
 */
import type { Block } from './myers';

export interface ShownBlock extends Block {
  counted: boolean;
}

export interface UnifiedOptions {
  context: number;
  maxChars: number;
  labels: { previous: string; current: string };
}

interface Hunk {
  /** Previous lines `[start, end)`; `first`..`last` index the blocks it holds. */
  start: number;
  end: number;
  first: number;
  last: number;
}

/**
 * Hunks: each counted block with `context` lines around it; then stretched over every block that
 * touches them (a context line must be equal in both versions); touching hunks merged. One pass over
 * the blocks, which are in order.
 */
function hunksOf(blocks: readonly ShownBlock[], context: number, lines: number): Hunk[] {
  const hunks: Hunk[] = [];
  let next = 0;
  for (const block of blocks) {
    if (!block.counted) continue;
    let hunk: Hunk = { start: Math.max(0, block.aStart - context), end: Math.min(lines, block.aEnd + context), first: -1, last: -1 };
    const previous = hunks[hunks.length - 1];
    if (previous && hunk.start <= previous.end) {
      previous.end = Math.max(previous.end, hunk.end);
      hunk = previous;
    } else hunks.push(hunk);
    // Blocks wholly before the hunk are behind us for good; the rest up to its end belong to it.
    while (next < blocks.length && (blocks[next] as Block).aEnd < hunk.start) next++;
    let k = hunk.last >= 0 ? hunk.last + 1 : next;
    for (; k < blocks.length && (blocks[k] as Block).aStart <= hunk.end; k++) {
      const touching = blocks[k] as Block;
      if (touching.aEnd < hunk.start) continue;
      if (hunk.first < 0) hunk.first = k;
      hunk.last = k;
      hunk.start = Math.min(hunk.start, touching.aStart);
      hunk.end = Math.max(hunk.end, touching.aEnd);
    }
    // Stretching back may reach the hunk before: one hunk then.
    while (hunks.length > 1) {
      const before = hunks[hunks.length - 2] as Hunk;
      const last = hunks[hunks.length - 1] as Hunk;
      if (last.start > before.end) break;
      before.end = Math.max(before.end, last.end);
      before.last = Math.max(before.last, last.last);
      hunks.pop();
    }
  }
  return hunks;
}

const range = (start: number, count: number): string => (count === 1 ? `${start + 1}` : `${count === 0 ? start : start + 1},${count}`);

/** The unified diff of the blocks that count; `truncated` when it stopped at the size bound. */
export function unifiedDiff(previous: readonly string[], current: readonly string[], blocks: readonly ShownBlock[], options: UnifiedOptions): { text: string; truncated: boolean } {
  const hunks = hunksOf(blocks, options.context, previous.length);
  if (hunks.length === 0) return { text: '', truncated: false };
  const out: string[] = [`--- ${options.labels.previous}`, `+++ ${options.labels.current}`];
  let size = out.reduce((sum, line) => sum + line.length + 1, 0);
  for (let h = 0; h < hunks.length; h++) {
    const hunk = hunks[h] as Hunk;
    const first = blocks[hunk.first] as Block;
    // Lines before the first block are equal: the same distance back in both versions.
    let a = hunk.start;
    let b = first.bStart - (first.aStart - hunk.start);
    const bFrom = b;
    const lines: string[] = [];
    for (let k = hunk.first; k <= hunk.last; k++) {
      const block = blocks[k] as Block;
      for (; a < block.aStart; a++, b++) lines.push(` ${current[b] ?? ''}`);
      for (; a < block.aEnd; a++) lines.push(`-${previous[a] ?? ''}`);
      for (; b < block.bEnd; b++) lines.push(`+${current[b] ?? ''}`);
    }
    for (; a < hunk.end; a++, b++) lines.push(` ${current[b] ?? ''}`);
    const header = `@@ -${range(hunk.start, a - hunk.start)} +${range(bFrom, b - bFrom)} @@`;
    const hunkSize = lines.reduce((sum, line) => sum + line.length + 1, header.length + 1);
    if (size + hunkSize <= options.maxChars) {
      out.push(header, ...lines);
      size += hunkSize;
      continue;
    }
    if (h === 0) {
      // One hunk larger than the bound: its first lines.
      out.push(header);
      size += header.length + 1;
      for (const line of lines) {
        if (size + line.length + 1 > options.maxChars) break;
        out.push(line);
        size += line.length + 1;
      }
    }
    const left = hunks.length - h;
    out.push(`\\ diff truncated: ${left} more hunk${left === 1 ? '' : 's'} not shown${h === 0 ? ' in full' : ''}`);
    return { text: out.join('\n'), truncated: true };
  }
  return { text: out.join('\n'), truncated: false };
}
