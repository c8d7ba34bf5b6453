/**
 * The safety net under the token rules: two lines whose keys differ only where a random run was drawn
 * anew are the same line. A run counts as redrawn when both versions have a run of the same length
 * (eight characters or more, one of them mixing digits, capitals or small letters) that differs in at least three
 * quarters of its positions (a run of random base64 drawn again differs in about 98 %, an edited code
 * or name in a few), or when one version masked it as an identifier and the other has a run of eight
 * characters or more there (the rules judge each draw on its own, and a draw can look less random
 * than most: a hex id that happens to hold digits only).
 */
import * as charsModule from './chars';
import { placeholder } from './writer';
// Local bindings, taken once: the TypeScript runner compiles to CommonJS, where each call through an
// imported name reads a getter, and in the scanning loops that cost more than the scanning itself.
const { isAlnum, isDigit, isTokenJoin, isUpper } = charsModule;

const ID = placeholder('token');
const MIN_RUN = 8;

const isRunChar = (c: number): boolean => isAlnum(c) || isTokenJoin(c);

function runEndAt(text: string, i: number): number {
  let j = i;
  while (j < text.length && isRunChar(text.charCodeAt(j))) j++;
  return j;
}

/** Digits, capitals and small letters: how many of the three a run holds. */
function classes(text: string, start: number, end: number): number {
  let mask = 0;
  for (let j = start; j < end && mask !== 7; j++) {
    const c = text.charCodeAt(j);
    if (isDigit(c)) mask |= 1;
    else if (isUpper(c)) mask |= 2;
    else if (isAlnum(c)) mask |= 4;
  }
  return (mask & 1) + ((mask >> 1) & 1) + ((mask >> 2) & 1);
}

function redrawn(a: string, aStart: number, aEnd: number, b: string, bStart: number, bEnd: number): boolean {
  const length = aEnd - aStart;
  if (length !== bEnd - bStart || length < MIN_RUN) return false;
  // One of them must look random; the other may be a draw that happened to hold digits only.
  if (Math.max(classes(a, aStart, aEnd), classes(b, bStart, bEnd)) < 2) return false;
  let differing = 0;
  for (let k = 0; k < length; k++) if (a.charCodeAt(aStart + k) !== b.charCodeAt(bStart + k)) differing++;
  return differing * 4 >= length * 3;
}

/** A run on one side where the other has the identifier placeholder: that slot holds random draws. */
const maskedThere = (start: number, end: number): boolean => end - start >= MIN_RUN;

/**
 * How many runs were redrawn when `previous` and `current` (two lines' keys) differ only by such runs;
 * -1 when they differ otherwise.
 */
export function redrawnRuns(previous: string, current: string): number {
  let i = 0;
  let j = 0;
  let runs = 0;
  while (i < previous.length && j < current.length) {
    const a = previous.charCodeAt(i);
    const b = current.charCodeAt(j);
    const aRun = isRunChar(a) && (i === 0 || !isRunChar(previous.charCodeAt(i - 1)));
    const bRun = isRunChar(b) && (j === 0 || !isRunChar(current.charCodeAt(j - 1)));
    if (aRun && bRun) {
      const aEnd = runEndAt(previous, i);
      const bEnd = runEndAt(current, j);
      if (aEnd - i === bEnd - j && previous.startsWith(current.slice(j, bEnd), i)) {
        i = aEnd;
        j = bEnd;
        continue;
      }
      if (!redrawn(previous, i, aEnd, current, j, bEnd)) return -1;
      runs++;
      i = aEnd;
      j = bEnd;
      continue;
    }
    if (bRun && previous.startsWith(ID, i)) {
      const bEnd = runEndAt(current, j);
      if (!maskedThere(j, bEnd)) return -1;
      runs++;
      i += ID.length;
      j = bEnd;
      continue;
    }
    if (aRun && current.startsWith(ID, j)) {
      const aEnd = runEndAt(previous, i);
      if (!maskedThere(i, aEnd)) return -1;
      runs++;
      i = aEnd;
      j += ID.length;
      continue;
    }
    if (a !== b) return -1;
    i++;
    j++;
  }
  return i === previous.length && j === current.length ? runs : -1;
}
