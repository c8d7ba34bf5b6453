/**
 * A robots.txt path pattern and its matching, linear in the path and the pattern whatever they hold:
 * no regular expression (a pattern like `/*a*a*a*a*Z$` compiled into one backtracks exponentially in the
 * path). The pattern is cut at its `*` into literal pieces; the first must start the path, each next one
 * is found, leftmost, after the previous one (the leftmost place leaves the most room for the rest, so
 * one pass decides), and with a final `$` the last piece must end the path. Each piece is searched with
 * Knuth–Morris–Pratt, so a piece never re-reads the path behind where it is looking.
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

/** Whether `path` (percent-normalised, with its query) matches the pattern. */
export function matchesPattern(pattern: PathPattern, path: string): boolean {
  const { pieces, anchored } = pattern;
  const first = pieces[0] ?? '';
  if (!path.startsWith(first)) return false;
  if (pieces.length === 1) return !anchored || path.length === first.length;
  let at = first.length;
  const middle = anchored ? pieces.length - 1 : pieces.length;
  for (let index = 1; index < middle; index++) {
    const piece = pieces[index]!;
    const found = indexFrom(path, piece, at);
    if (found < 0) return false;
    at = found + piece.length;
  }
  if (!anchored) return true;
  const last = pieces[pieces.length - 1]!;
  return path.length - last.length >= at && path.endsWith(last);
}

/** Knuth–Morris–Pratt's failure table, in a buffer kept between calls (matching runs on one thread). */
let table = new Int32Array(256);

/** Where `needle` first occurs in `text` at or after `from`, or -1, in O(text + needle) steps. */
function indexFrom(text: string, needle: string, from: number): number {
  const length = needle.length;
  if (length === 0) return from;
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
