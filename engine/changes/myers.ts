/**
 * Line alignment of two versions: Myers' O(ND) difference algorithm in its linear-space form (the
 * middle snake, divide and conquer, an explicit stack instead of recursion), on integer ids of the
 * lines' keys.
 *
 * Work is bounded: each middle-snake search stops after the work left in the budget, and a part of the
 * problem that would need more falls back to an alignment on lines that occur once in each version
 * (in order, by a longest increasing subsequence), which is O(n log n). The result is then marked
 * approximate: every changed line is still reported, only the pairing of changes can be coarser.
 */

/** A run of lines the versions share: `a[aStart, aStart+length)` equals `b[bStart, bStart+length)`. */
export interface Match {
  aStart: number;
  bStart: number;
  length: number;
}

/** A maximal run of differing lines: `a[aStart, aEnd)` became `b[bStart, bEnd)` (either may be empty). */
export interface Block {
  aStart: number;
  aEnd: number;
  bStart: number;
  bEnd: number;
}

export interface Alignment {
  blocks: Block[];
  approximate: boolean;
}

/** Default work budget: diagonal steps plus snake steps; some 50 ms on one core, about the Markdown conversion of a 1 MB page. */
export const DIFF_BUDGET = 5_000_000;

const OVER_BUDGET = -1;
const NOTHING_SHARED = -2;

/** Aligns `a` (previous) and `b` (current); `budget` bounds the work of the exact search. */
export function align(a: Int32Array, b: Int32Array, budget = DIFF_BUDGET): Alignment {
  const matches: Match[] = [];
  let approximate = false;
  let left = budget;
  const offset = Math.ceil((a.length + b.length) / 2) + 2;
  const vf = new Int32Array(2 * offset + 2);
  const vb = new Int32Array(2 * offset + 2);
  const stack: number[] = [0, a.length, 0, b.length];
  while (stack.length > 0) {
    let bHi = stack.pop() as number;
    let bLo = stack.pop() as number;
    let aHi = stack.pop() as number;
    let aLo = stack.pop() as number;
    let start = 0;
    while (aLo + start < aHi && bLo + start < bHi && a[aLo + start] === b[bLo + start]) start++;
    if (start > 0) matches.push({ aStart: aLo, bStart: bLo, length: start });
    aLo += start;
    bLo += start;
    let end = 0;
    while (aHi - end > aLo && bHi - end > bLo && a[aHi - 1 - end] === b[bHi - 1 - end]) end++;
    if (end > 0) matches.push({ aStart: aHi - end, bStart: bHi - end, length: end });
    aHi -= end;
    bHi -= end;
    if (aLo === aHi || bLo === bHi) continue;
    const n = aHi - aLo;
    const m = bHi - bLo;
    const found = left > 0 ? middle(a, aLo, n, b, bLo, m, vf, vb, offset, left) : { x: OVER_BUDGET, y: 0, work: 0 };
    left -= found.work;
    if (found.x === NOTHING_SHARED) continue;
    // A split must leave two smaller parts; anything else (over budget) takes the fallback.
    if (found.x < 0 || (found.x === 0 && found.y === 0) || (found.x === n && found.y === m)) {
      approximate = true;
      uniqueAnchors(a, aLo, aHi, b, bLo, bHi, matches);
      continue;
    }
    stack.push(aLo + found.x, aHi, bLo + found.y, bHi);
    stack.push(aLo, aLo + found.x, bLo, bLo + found.y);
  }
  return { blocks: blocksOf(matches, a.length, b.length), approximate };
}

/**
 * A point on a shortest edit path of `a[aLo, aLo+n)` against `b[bLo, bLo+m)`, where the forward and
 * the reverse searches meet (relative coordinates), or x = -1 past `limit` work. Diagonals that run
 * off the edit graph are dropped from the search (their ends are no points of it).
 */
function middle(a: Int32Array, aLo: number, n: number, b: Int32Array, bLo: number, m: number, vf: Int32Array, vb: Int32Array, off: number, limit: number): { x: number; y: number; work: number } {
  const maxD = Math.ceil((n + m) / 2);
  vf.fill(-1, off - maxD - 1, off + maxD + 2);
  vb.fill(-1, off - maxD - 1, off + maxD + 2);
  vf[off + 1] = 0;
  vb[off + 1] = 0;
  const delta = n - m;
  const front = (delta & 1) !== 0;
  let fStart = 0;
  let fEnd = 0;
  let rStart = 0;
  let rEnd = 0;
  let work = 0;
  for (let d = 0; d < maxD; d++) {
    for (let k = -d + fStart; k <= d - fEnd; k += 2) {
      let x = k === -d || (k !== d && (vf[off + k - 1] as number) < (vf[off + k + 1] as number)) ? (vf[off + k + 1] as number) : (vf[off + k - 1] as number) + 1;
      let y = x - k;
      const x0 = x;
      while (x < n && y < m && a[aLo + x] === b[bLo + y]) {
        x++;
        y++;
      }
      work += 1 + x - x0;
      vf[off + k] = x;
      if (x > n) fEnd += 2;
      else if (y > m) fStart += 2;
      else if (front) {
        // Only the reverse diagonals of this search hold its values.
        const r = off + delta - k;
        if (Math.abs(delta - k) <= maxD && (vb[r] as number) !== -1 && x >= n - (vb[r] as number)) return { x, y, work };
      }
    }
    for (let k = -d + rStart; k <= d - rEnd; k += 2) {
      // The same search on both parts read backwards: x counts elements taken from the end.
      let x = k === -d || (k !== d && (vb[off + k - 1] as number) < (vb[off + k + 1] as number)) ? (vb[off + k + 1] as number) : (vb[off + k - 1] as number) + 1;
      let y = x - k;
      const x0 = x;
      while (x < n && y < m && a[aLo + n - 1 - x] === b[bLo + m - 1 - y]) {
        x++;
        y++;
      }
      work += 1 + x - x0;
      vb[off + k] = x;
      if (x > n) rEnd += 2;
      else if (y > m) rStart += 2;
      else if (!front) {
        const f = off + delta - k;
        if (Math.abs(delta - k) <= maxD && (vf[f] as number) !== -1) {
          const fx = vf[f] as number;
          if (fx >= n - x) return { x: fx, y: fx - (delta - k), work };
        }
      }
    }
    if (work > limit) return { x: OVER_BUDGET, y: 0, work };
  }
  // Searches that never meet before maxD: the parts share no element, one replacement is exact.
  return { x: NOTHING_SHARED, y: 0, work };
}

/**
 * The fallback: lines occurring exactly once in each part, kept in the order both versions agree on
 * (longest increasing subsequence, patience style), each extended over equal neighbours.
 */
function uniqueAnchors(a: Int32Array, aLo: number, aHi: number, b: Int32Array, bLo: number, bHi: number, matches: Match[]): void {
  const counts = new Map<number, number>();
  const where = new Map<number, number>();
  for (let i = aLo; i < aHi; i++) counts.set(a[i] as number, (counts.get(a[i] as number) ?? 0) + 1);
  for (let j = bLo; j < bHi; j++) {
    const id = b[j] as number;
    const count = counts.get(id);
    if (count === undefined) continue;
    // Count once-in-a as 1, then mark seen-in-b by going negative; a second sighting in b disqualifies it.
    if (count === 1) {
      counts.set(id, -1);
      where.set(id, j);
    } else if (count === -1) counts.set(id, 0);
  }
  const pairs: Array<[number, number]> = [];
  for (let i = aLo; i < aHi; i++) {
    const id = a[i] as number;
    if (counts.get(id) === -1) pairs.push([i, where.get(id) as number]);
  }
  // Longest increasing subsequence of the b positions, in O(p log p).
  const tails: number[] = [];
  const previous = new Int32Array(pairs.length).fill(-1);
  for (let p = 0; p < pairs.length; p++) {
    const y = (pairs[p] as [number, number])[1];
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((pairs[tails[mid] as number] as [number, number])[1] < y) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) previous[p] = tails[lo - 1] as number;
    tails[lo] = p;
  }
  const chain: number[] = [];
  for (let p = tails.length > 0 ? (tails[tails.length - 1] as number) : -1; p >= 0; p = previous[p] as number) chain.push(p);
  chain.reverse();
  let aFloor = aLo;
  let bFloor = bLo;
  for (const p of chain) {
    let [x, y] = pairs[p] as [number, number];
    if (x < aFloor || y < bFloor) continue;
    while (x > aFloor && y > bFloor && a[x - 1] === b[y - 1]) {
      x--;
      y--;
    }
    let length = 0;
    while (x + length < aHi && y + length < bHi && a[x + length] === b[y + length]) length++;
    matches.push({ aStart: x, bStart: y, length });
    aFloor = x + length;
    bFloor = y + length;
  }
}

/** The differing runs between the matches. */
function blocksOf(matches: Match[], n: number, m: number): Block[] {
  matches.sort((p, q) => p.aStart - q.aStart || p.bStart - q.bStart);
  const blocks: Block[] = [];
  let a = 0;
  let b = 0;
  for (const match of matches) {
    if (match.length === 0) continue;
    if (match.aStart > a || match.bStart > b) blocks.push({ aStart: a, aEnd: match.aStart, bStart: b, bEnd: match.bStart });
    a = match.aStart + match.length;
    b = match.bStart + match.length;
  }
  if (a < n || b < m) blocks.push({ aStart: a, aEnd: n, bStart: b, bEnd: m });
  return blocks;
}
