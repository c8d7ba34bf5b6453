/**
 * A robots.txt path pattern and its matching, linear in the path and the pattern whatever they hold:
 * no regular expression (a pattern like `/*a*a*a*a*Z$` compiled into one backtracks exponentially in the
 * path). The pattern is cut at its `*` into literal pieces; the first must start the path, each next one
 * is found, leftmost, after the previous one (the leftmost place leaves the most room for the rest, so
 * one pass decides), and with a final `$` the last piece must end the path. A piece of up to
 * SHORT_PIECE characters is searched with the engine's own indexOf, several times faster than any
 * search written here; a longer one with Knuth–Morris–Pratt, which never re-reads the path behind where
 * it is looking: V8's indexOf turns quadratic on long patterns that almost match (measured: 140 ms for
 * 500 pieces of 513 characters in a 2,048-character path, against 9 ms; bench/robots-match.ts).
 */

export interface PathPattern {
  /** The literal pieces between the `*`s (empty strings where two `*` meet or at either end). */
  pieces: readonly string[];
  /** Whether the pattern ended with `$`: the path must end where the pattern does. */
  anchored: boolean;
}

/** `raw` already percent-normalised. A `$` anywhere but at the end is an ordinary character. */
export function compilePattern(raw: string): PathPattern {
  const anchored = raw.endsWith('$');
  return { pieces: (anchored ? raw.slice(0, -1) : raw).split('*'), anchored };
}

/** Characters a check may still look at, shared by the rules of one check. */
export interface MatchBudget {
  left: number;
}

/**
 * Whether `path` (percent-normalised, with its query) matches the pattern; undefined when `budget`
 * ran out before it could tell. Each search charges the characters it looked at (about).
 */
export function matchesPattern(pattern: PathPattern, path: string, budget: MatchBudget = { left: Infinity }): boolean | undefined {
  const { pieces, anchored } = pattern;
  const first = pieces[0] ?? '';
  if (!path.startsWith(first)) return false;
  if (pieces.length === 1) return !anchored || path.length === first.length;
  let at = first.length;
  const middle = anchored ? pieces.length - 1 : pieces.length;
  for (let index = 1; index < middle; index++) {
    const piece = pieces[index]!;
    if (budget.left <= 0) return undefined;
    const found = piece.length <= SHORT_PIECE ? path.indexOf(piece, at) : indexFrom(path, piece, at);
    budget.left -= (found < 0 ? path.length - at : found - at) + piece.length * (piece.length <= SHORT_PIECE ? 1 : 2);
    if (found < 0) return false;
    at = found + piece.length;
  }
  if (!anchored) return true;
  const last = pieces[pieces.length - 1]!;
  return path.length - last.length >= at && path.endsWith(last);
}

/** Pieces up to this long are searched with String.prototype.indexOf (linear enough up to about 250 in V8). */
const SHORT_PIECE = 128;

/** Knuth–Morris–Pratt's failure table, in a buffer kept between calls (matching runs on one thread). */
let table = new Int32Array(256);

/** Where `needle` first occurs in `text` at or after `from`, or -1, in O(text + needle) steps. */
export function indexFrom(text: string, needle: string, from: number): number {
  const length = needle.length;
  if (length === 0) return Math.min(from, text.length);
  if (table.length < length) table = new Int32Array(Math.max(length, table.length * 2));
  table[0] = 0;
  for (let index = 1, matched = 0; index < length; index++) {
    const char = needle.charCodeAt(index);
    while (matched > 0 && char !== needle.charCodeAt(matched)) matched = table[matched - 1]!;
    if (char === needle.charCodeAt(matched)) matched++;
    table[index] = matched;
  }
  for (let index = from, matched = 0; index < text.length; index++) {
    const char = text.charCodeAt(index);
    while (matched > 0 && char !== needle.charCodeAt(matched)) matched = table[matched - 1]!;
    if (char === needle.charCodeAt(matched)) matched++;
    if (matched === length) return index - length + 1;
  }
  return -1;
}
