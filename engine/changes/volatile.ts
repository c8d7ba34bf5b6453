/**
 * One line of Markdown to its comparison key: one pass from left to right that masks dates and times,
 * random tokens, labelled per-request values, traffic counters and generation times, and writes link
 * targets and bare URLs in their compared form (urls.ts). Linear in the line's length: each position
 * is looked at a bounded number of times, and nothing is searched for again after it was not found.
 */
import * as charsModule from './chars';
import * as timestampsModule from './timestamps';
import * as tokensModule from './tokens';
import type { MaskedValue, NoiseKind } from './types';
import * as urlsModule from './urls';
import { KeyWriter } from './writer';
// Local bindings, taken once: the TypeScript runner compiles to CommonJS, where each call through an
// imported name reads a getter, and in the scanning loops that cost more than the scanning itself.
const { codeAt, isAlnum, isDigit } = charsModule;
const { matchTimestamp } = timestampsModule;
const { classifyRun, labelledKind, numberEnd, numberKind, runEnd } = tokensModule;
const { writeUrl } = urlsModule;

/** Where a bare URL ends: at white space or a character that closes it in Markdown or prose. */
function bareUrlEnd(text: string, i: number): number {
  let j = i;
  while (j < text.length) {
    const c = text.charCodeAt(j);
    // space, tab, " ' ) ] < > `
    if (c <= 32 || c === 34 || c === 39 || c === 41 || c === 93 || c === 60 || c === 62 || c === 96 || c === 0xa0) break;
    j++;
  }
  // Sentence punctuation after a URL is not part of it.
  while (j > i) {
    const c = text.charCodeAt(j - 1);
    if (c === 46 || c === 44 || c === 59 || c === 58 || c === 33 || c === 63) j--;
    else break;
  }
  return j;
}

/** `http://` or `https://` at `i`, any case. */
function isHttpAt(text: string, i: number): boolean {
  if ((text.charCodeAt(i) | 0x20) !== 104 || (codeAt(text, i + 1) | 0x20) !== 116 || (codeAt(text, i + 2) | 0x20) !== 116 || (codeAt(text, i + 3) | 0x20) !== 112) return false;
  const s = (codeAt(text, i + 4) | 0x20) === 115 ? 1 : 0;
  return codeAt(text, i + 4 + s) === 58 && codeAt(text, i + 5 + s) === 47 && codeAt(text, i + 6 + s) === 47;
}

/** Writes the text before a volatile run and the run's placeholder; answers where the text goes on. */
function masked(line: string, from: number, start: number, end: number, kind: NoiseKind, out: KeyWriter): number {
  out.text(line.slice(from, start));
  out.mask(kind, line.slice(start, end));
  return end;
}

/** Writes the key of `line` into `out`. */
export function writeLine(line: string, out: KeyWriter): void {
  const n = line.length;
  let from = 0;
  let i = 0;
  /** Inside a run already judged no token: its later words are not judged again. */
  let judgedUntil = -1;
  /** Past the last `)` of the line: a `](` there opens no link target. */
  let noCloseFrom = n;
  while (i < n) {
    const c = line.charCodeAt(i);
    if (c === 93 && codeAt(line, i + 1) === 40 && i + 2 < noCloseFrom) {
      // `](target)`: the Markdown converter escapes spaces and parentheses in targets, so the first `)` ends it.
      const close = line.indexOf(')', i + 2);
      if (close < 0) noCloseFrom = i;
      else {
        out.text(line.slice(from, i + 2));
        writeUrl(line.slice(i + 2, close), out);
        from = close;
        i = close;
        continue;
      }
    }
    if (!isAlnum(c) || (i > 0 && isAlnum(line.charCodeAt(i - 1)))) {
      i++;
      continue;
    }
    if (isHttpAt(line, i)) {
      const end = bareUrlEnd(line, i);
      out.text(line.slice(from, i));
      writeUrl(line.slice(i, end), out);
      from = end;
      i = end;
      continue;
    }
    const stamp = matchTimestamp(line, i);
    if (stamp > i) {
      from = masked(line, from, i, stamp, 'timestamp', out);
      i = stamp;
      continue;
    }
    if (isDigit(c)) {
      const end = numberEnd(line, i);
      const kind = numberKind(line, i, end);
      if (kind) {
        from = masked(line, from, i, end, kind, out);
        i = end;
        continue;
      }
    }
    if (i >= judgedUntil) {
      const end = runEnd(line, i);
      const kind = labelledKind(line, i) ?? classifyRun(line, i, end);
      if (kind) {
        from = masked(line, from, i, end, kind, out);
        i = end;
        continue;
      }
      judgedUntil = end;
    }
    while (i < n && isAlnum(line.charCodeAt(i))) i++;
  }
  out.text(line.slice(from));
}

/** The key of one line and the runs it masks. */
export function maskLine(line: string): { key: string; values: readonly MaskedValue[] } {
  const out = new KeyWriter();
  writeLine(line, out);
  return out.take();
}
