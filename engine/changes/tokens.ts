/**
 * Volatile words of page text that are not dates: random tokens judged by their characters (UUIDs,
 * hex, base64-like runs, epoch numbers), values named by a label before them ("Request ID:", "served
 * by"), traffic counters ("1,234 views") and generation times ("generated in 0.12 s").
 *
 * A random token is told from a name by how word-like its letters are when read as camelCase humps
 * (see `wordiness`): `getElementsByTagName` and `iPhone15ProMax` are, base64 is not. The thresholds
 * are the tuning knobs (see bench/changes.ts for the pages they were tuned on and the pages held out).
 */
import * as charsModule from './chars';
import type { NoiseKind } from './types';
// Local bindings, taken once: the TypeScript runner compiles to CommonJS, where each call through an
// imported name reads a getter, and in the scanning loops that cost more than the scanning itself.
const { codeAt, digitsEnd, lettersEnd, isAlnum, isDigit, isHex, isLetter, isLower, isTokenJoin, isUpper, lowerWordAt, spacesEnd, wordCode, wordCodes, wordsBefore } = charsModule;

/** Shortest run judged a random token when it has digits. */
export const TOKEN_MIN_MIXED = 12;
/** Shortest letters-only run judged a random token (mixed case, not word-like). */
export const TOKEN_MIN_LETTERS = 16;
/** Shortest hex run judged a hash when it has digits and letters (an all-digit run needs 16). */
export const HEX_MIN = 8;

/**
 * End of the run of token characters (letters, digits, `+/=_-`) starting at `i`; in a URL a slash
 * separates path segments instead.
 */
export function runEnd(text: string, i: number, inUrl = false): number {
  let j = i;
  while (j < text.length) {
    const c = text.charCodeAt(j);
    if (!isAlnum(c) && !(isTokenJoin(c) && !(inUrl && c === 47))) break;
    // `=` is base64 padding only at the end: before a letter or digit it joins a name to its value.
    if (c === 61 && isAlnum(codeAt(text, j + 1))) break;
    j++;
  }
  // A join at the end ("token-", "a/") belongs to what follows, not to the run.
  while (j > i + 1 && isTokenJoin(text.charCodeAt(j - 1)) && text.charCodeAt(j - 1) !== 61) j--;
  return j;
}

/**
 * What kind of random token the run `text[start, end)` is, or undefined for words. A run joined by
 * `-`/`_` is a token as a whole when one of its words is (`req_7ad954785676afcb`): masking the whole
 * run keeps the key the same whichever way its random part happens to look.
 */
export function classifyRun(text: string, start: number, end: number): NoiseKind | undefined {
  if (end - start < HEX_MIN) return undefined;
  const whole = classifyWord(text, start, end);
  if (whole !== undefined) return whole;
  let word = start;
  for (let j = start; j <= end; j++) {
    if (j < end && isAlnum(text.charCodeAt(j))) continue;
    if (word > start || j < end) {
      const kind = j - word >= HEX_MIN ? classifyWord(text, word, j) : undefined;
      if (kind !== undefined) return kind;
    }
    word = j + 1;
  }
  return undefined;
}

function classifyWord(text: string, start: number, end: number): NoiseKind | undefined {
  const length = end - start;
  if (length < HEX_MIN) return undefined;
  if (length === 36 && isUuid(text, start)) return 'uuid';
  let digits = 0;
  let upper = 0;
  let lower = 0;
  let hex = true;
  let joins = 0;
  /** Changes of class (digit, capital, small letter) between neighbouring letters and digits. */
  let switches = 0;
  let previous = -1;
  for (let j = start; j < end; j++) {
    const c = text.charCodeAt(j);
    if (isTokenJoin(c)) {
      joins++;
      continue;
    }
    const cls = isDigit(c) ? 0 : isUpper(c) ? 1 : 2;
    if (cls === 0) digits++;
    else if (cls === 1) upper++;
    else lower++;
    if (previous >= 0 && previous !== cls) switches++;
    previous = cls;
    if (hex && !isHex(c)) hex = false;
  }
  const letters = upper + lower;
  const alnum = digits + letters;
  if (joins === 0 && letters === 0) return epoch(text, start, alnum);
  // Hex with digits and letters from eight characters; digits only from sixteen (an id, no amount).
  if (hex && digits > 0 && alnum >= (letters > 0 ? HEX_MIN : 16)) return 'hex';
  if (alnum < TOKEN_MIN_MIXED || letters < 2) return undefined;
  // Small letters and digits: random (base 36) when digits break the letters up again and again;
  // slugs such as "top10products2024" switch a few times only.
  if (upper === 0) return digits >= 3 && switches >= 4 && switches * 5 >= alnum ? 'token' : undefined;
  if (digits === 0 && alnum < TOKEN_MIN_LETTERS) return undefined;
  const { counted, wordy } = wordiness(text, start, end);
  // Nothing but capitals and digits ("SKUAB12CD34EF"): a code when digits break it up.
  if (counted === 0) return digits >= 2 ? 'token' : undefined;
  // Names read as words: most of their letters (85 %) in syllable-like humps.
  if (wordy * 20 >= counted * 17) return undefined;
  // Random: classes switching on a fifth of the characters or more (base64 switches on about 60 %).
  return switches * 5 >= alnum ? 'token' : undefined;
}

const isVowel = (c: number): boolean => {
  const lower = c | 0x20;
  return lower === 97 || lower === 101 || lower === 105 || lower === 111 || lower === 117 || lower === 121;
};

/**
 * How word-like a run's letters are. It is cut into humps as camelCase is read (`getElementsByTagName`
 * → get, Elements, By, Tag, Name; `iPhone15ProMax` → i, Phone, Pro, Max; capitals before a hump are an
 * acronym and left out); `wordy` counts the letters of humps that read as syllables (three letters
 * or more, or a capital and a small letter, with a vowel). Names are mostly wordy; random tokens cut
 * into humps of one or two letters, often without a vowel, and are not.
 */
function wordiness(text: string, start: number, end: number): { counted: number; wordy: number } {
  let counted = 0;
  let wordy = 0;
  let j = start;
  while (j < end) {
    const c = text.charCodeAt(j);
    if (!isLetter(c)) {
      j++;
      continue;
    }
    let humpStart = j;
    let k = j;
    if (isUpper(c)) {
      while (k < end && isUpper(text.charCodeAt(k))) k++;
      if (k >= end || !isLower(text.charCodeAt(k))) {
        j = k; // an acronym: neither word nor token
        continue;
      }
      humpStart = k - 1;
    }
    while (k < end && isLower(text.charCodeAt(k))) k++;
    const size = k - humpStart;
    counted += size;
    if (size >= 3 || (size === 2 && isUpper(text.charCodeAt(humpStart)))) {
      for (let v = humpStart; v < k; v++) {
        if (isVowel(text.charCodeAt(v))) {
          wordy += size;
          break;
        }
      }
    }
    j = k;
  }
  return { counted, wordy };
}

/** 8-4-4-4-12 hex digits. */
function isUuid(text: string, start: number): boolean {
  for (let k = 0; k < 36; k++) {
    const c = text.charCodeAt(start + k);
    if (k === 8 || k === 13 || k === 18 || k === 23) {
      if (c !== 45) return false;
    } else if (!isHex(c)) return false;
  }
  return true;
}

/** Epoch seconds or milliseconds of this century's first decades, or a compact `yyyymmddhhmmss`. */
function epoch(text: string, start: number, length: number): NoiseKind | undefined {
  const first = text.charCodeAt(start);
  if ((length === 10 || length === 13) && first === 49) return 'timestamp';
  if (length === 14 && (text.startsWith('19', start) || text.startsWith('20', start))) return 'timestamp';
  if (length >= 16) return 'hex';
  return undefined;
}

/** The last word of a label naming a per-request value, with the words that may come before it. */
const ID_QUALIFIERS: ReadonlySet<string> = new Set([
  'request', 'req', 'trace', 'ray', 'correlation', 'transaction', 'session', 'incident', 'event', 'span', 'error', 'support', 'debug',
]);
const SINGLE_LABELS: ReadonlySet<string> = new Set([
  'requestid', 'traceid', 'rayid', 'correlationid', 'sessionid', 'reqid', 'nonce', 'csrf', 'xsrf', 'csrftoken', 'xsrftoken',
]);
const TOKEN_QUALIFIERS: ReadonlySet<string> = new Set(['csrf', 'xsrf', 'session', 'auth', 'access', 'security', 'form', 'request', 'anti', 'forgery']);
/** "served by web-12", "generated … by node-3". */
const SERVED: ReadonlySet<string> = new Set(['served', 'generated', 'rendered', 'handled', 'processed', 'answered']);
/** Labels that name a value only when a colon, `#` or `=` joins them to it ("Server: web-12", not "the server 12 times"). */
const HOST_LABELS: ReadonlySet<string> = new Set(['server', 'node', 'host', 'instance', 'pod', 'worker', 'backend', 'edge', 'pop', 'datacenter', 'region']);

/** Where the character before `i` is, looking through up to three spaces (-1 at the start). */
function labelEnd(text: string, i: number): number {
  let j = i - 1;
  while (j >= 0 && i - j <= 3 && (text.charCodeAt(j) === 32 || text.charCodeAt(j) === 0xa0)) j--;
  return j;
}

/** Last letters of every label without a colon: a cheap test before reading the words. */
const LABEL_ENDINGS: ReadonlySet<number> = new Set(['id', 'by', 'en', 'ce', 'rf', 'ds'].map((pair) => (pair.charCodeAt(0) << 8) | pair.charCodeAt(1)));

/** Words that are labels themselves, never the value of one ("CSRF token: …"). */
const LABEL_WORDS = wordCodes(['id', 'ids', 'token', 'nonce', 'csrf', 'xsrf', 'by', 'is', 'of', 'for', 'the', 'and', 'not', 'was', 'to']);

/** Whether the word at `i` is the value of a per-request label before it. */
export function labelledKind(text: string, i: number): NoiseKind | undefined {
  const at = labelEnd(text, i);
  const join = at < 0 ? -1 : text.charCodeAt(at);
  const joined = join === 58 || join === 35 || join === 61; // : # =
  if (!joined) {
    if (!isLetter(join) || at === i - 1) return undefined;
    if (!LABEL_ENDINGS.has(((codeAt(text, at - 1) | 0x20) << 8) | (join | 0x20))) return undefined;
  }
  const wordEnd = lettersEnd(text, i);
  if (LABEL_WORDS.has(wordCode(text, i, wordEnd)) && !isAlnum(codeAt(text, wordEnd))) return undefined;
  const [w1 = '', w2 = ''] = wordsBefore(text, i, 2);
  if ((w1 === 'id' || w1 === 'ids') && ID_QUALIFIERS.has(w2)) return 'request_id';
  if (SINGLE_LABELS.has(w1)) return w1 === 'nonce' || w1.includes('srf') ? 'token' : 'request_id';
  if (w1 === 'token' && TOKEN_QUALIFIERS.has(w2)) return 'token';
  if (w1 === 'by' && wordsBefore(text, i, 6, 60).some((word) => SERVED.has(word))) return 'request_id';
  if (joined && HOST_LABELS.has(w1)) return 'request_id';
  return undefined;
}

/** End of a number at `i`: digits with `,`/`.` groups and an optional `k`/`M`/`B` suffix. */
export function numberEnd(text: string, i: number): number {
  let end = digitsEnd(text, i);
  for (;;) {
    const c = codeAt(text, end);
    if ((c === 44 || c === 46) && isDigit(codeAt(text, end + 1))) end = digitsEnd(text, end + 1);
    else break;
  }
  const suffix = codeAt(text, end);
  if ((suffix === 107 || suffix === 75 || suffix === 77 || suffix === 66) && !isLetter(codeAt(text, end + 1))) end++;
  return end;
}

const COUNTER_WORDS: ReadonlySet<string> = new Set([
  'views', 'view', 'visits', 'visitors', 'visitor', 'reads', 'readers', 'hits', 'plays', 'downloads', 'viewers', 'watching',
  'viewing', 'online', 'impressions', 'pageviews',
]);
/** Words that may stand between a count and its counter word ("37 users online", "12 people viewing"). */
const COUNTED: ReadonlySet<string> = new Set(['people', 'users', 'visitors', 'members', 'guests', 'unique', 'page', 'total', 'others', 'are', 'now']);
const COUNTER_LABELS: ReadonlySet<string> = new Set([
  'views', 'visitors', 'visits', 'hits', 'pageviews', 'online', 'viewers', 'reads', 'downloads', 'plays', 'impressions',
]);
const COUNTER_FILLERS: ReadonlySet<string> = new Set(['now', 'today', 'currently', 'total', 'right', 'so', 'far']);
const VIEWED: ReadonlySet<string> = new Set(['viewed', 'visited', 'read', 'played', 'downloaded', 'seen']);

const SECONDS: ReadonlySet<string> = new Set(['ms', 's', 'sec', 'secs', 'second', 'seconds', 'millisecond', 'milliseconds', 'us', 'msec', 'msecs']);
const DURATION_LABELS: ReadonlySet<string> = new Set(['took', 'time', 'elapsed', 'duration', 'latency']);
const GENERATED: ReadonlySet<string> = new Set([
  'generated', 'rendered', 'served', 'processed', 'built', 'loaded', 'compiled', 'executed', 'computed', 'created', 'answered', 'completed', 'finished', 'delivered',
]);

/** Whether the number `text[i, end)` is a traffic counter or a generation time. */
export function numberKind(text: string, i: number, end: number): NoiseKind | undefined {
  const after = spacesEnd(text, end, 1);
  const { word: next, end: nextEnd } = lowerWordAt(text, after, 12);
  if (next !== '' && (after > end || SECONDS.has(next))) {
    if (SECONDS.has(next)) {
      // "took 12 ms", "Render time: 12 ms", "generated at 15:45:12 UTC in 0.12 s".
      const [w1 = '', ...rest] = wordsBefore(text, i, 6, 60);
      if (DURATION_LABELS.has(w1) || (w1 === 'in' && rest.some((word) => GENERATED.has(word)))) return 'duration';
    }
    if (COUNTER_WORDS.has(next)) return 'counter';
    if (COUNTED.has(next)) {
      const third = lowerWordAt(text, spacesEnd(text, nextEnd, 1), 12);
      if (COUNTER_WORDS.has(third.word)) return 'counter';
      if (COUNTED.has(third.word) && COUNTER_WORDS.has(lowerWordAt(text, spacesEnd(text, third.end, 1), 12).word)) return 'counter';
    }
    if (next === 'times' && VIEWED.has(wordsBefore(text, i, 1)[0] ?? '')) return 'counter';
  }
  const at = labelEnd(text, i);
  const join = at < 0 ? -1 : text.charCodeAt(at);
  if (join === 58 || (isLetter(join) && at < i - 1)) {
    // "Views: 1,234", "Online now: 37", "Visitors today 120".
    const [w1 = '', w2 = ''] = wordsBefore(text, i, 2);
    if (COUNTER_LABELS.has(w1) || (COUNTER_FILLERS.has(w1) && COUNTER_LABELS.has(w2))) return 'counter';
  }
  return undefined;
}
