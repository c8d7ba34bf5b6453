/**
 * Dates and times in page text, matched by hand at a word start: ISO 8601 (`2024-05-06T15:45:12Z`),
 * numeric dates (`06/05/2024`, `6.5.2024`, `2024/05/06`), month names (`May 6, 2024`, `6 May 2024`,
 * `Mon, 06 May 2024 15:45:12 GMT`), clock times with seconds, am/pm and zones, and relative times
 * (`5 minutes ago`, `3h ago`, `just now`). Each matcher reads a bounded number of characters.
 * English month and weekday names only.
 */
import * as charsModule from './chars';
// Local bindings, taken once: the TypeScript runner compiles to CommonJS, where each call through an
// imported name reads a getter, and in the scanning loops that cost more than the scanning itself.
const { codeAt, digitsEnd, isAlnum, isDigit, isLetter, isUpper, lettersEnd, spacesEnd, wordAt, wordCode, wordCodes } = charsModule;

const MONTHS = wordCodes([
  'jan', 'january', 'feb', 'february', 'mar', 'march', 'apr', 'april', 'may', 'jun', 'june', 'jul', 'july',
  'aug', 'august', 'sep', 'sept', 'september', 'oct', 'october', 'nov', 'november', 'dec', 'december',
]);

const WEEKDAYS = wordCodes([
  'mon', 'monday', 'tue', 'tues', 'tuesday', 'wed', 'wednesday', 'thu', 'thur', 'thurs', 'thursday', 'fri', 'friday',
  'sat', 'saturday', 'sun', 'sunday',
]);

const ZONES: ReadonlySet<string> = new Set([
  'UTC', 'GMT', 'Z', 'CET', 'CEST', 'EET', 'EEST', 'WET', 'WEST', 'BST', 'IST', 'EST', 'EDT', 'CST', 'CDT', 'MST', 'MDT',
  'PST', 'PDT', 'AKST', 'AKDT', 'HST', 'JST', 'KST', 'AEST', 'AEDT', 'ACST', 'AWST', 'NZST', 'NZDT', 'MSK', 'SGT', 'HKT',
]);

const UNITS = wordCodes([
  'second', 'seconds', 'sec', 'secs', 'minute', 'minutes', 'min', 'mins', 'hour', 'hours', 'hr', 'hrs', 'day', 'days',
  'week', 'weeks', 'wk', 'wks', 'month', 'months', 'mo', 'mos', 'year', 'years', 'yr', 'yrs',
]);
const SHORT_UNITS = wordCodes(['s', 'm', 'h', 'd', 'w', 'y', 'mo', 'min', 'hr', 'yr']);
const MOMENTS = wordCode('moments', 0, 7);
/** Words that may start a relative time. */
const RELATIVE_STARTS = wordCodes(['a', 'an', 'one', 'few', 'just', 'moments']);

const NO_MATCH = -1;

/** A word boundary after `end`: no letter or digit follows. */
const bounded = (text: string, end: number): number => (isAlnum(codeAt(text, end)) ? NO_MATCH : end);

/** Where a date or time starting at `i` ends, or -1. */
export function matchTimestamp(text: string, i: number): number {
  const c = codeAt(text, i);
  if (isDigit(c)) {
    const end = Math.max(numericDate(text, i), dayMonthDate(text, i), clock(text, i), relativeNumber(text, i));
    return end > i ? end : NO_MATCH;
  }
  if (!isLetter(c)) return NO_MATCH;
  // Most words are none of the few that can start a date: one look-up rules them out.
  const wordEnd = lettersEnd(text, i);
  const code = wordCode(text, i, wordEnd);
  let end = NO_MATCH;
  if (WEEKDAYS.has(code)) end = weekdayDate(text, wordEnd);
  else if (MONTHS.has(code)) end = monthDayDate(text, i);
  else if (RELATIVE_STARTS.has(code) || UNITS.has(code)) end = relativeWords(text, i);
  return end > i ? end : NO_MATCH;
}

/** `HH:MM[:SS[.fff]][ am|pm][ zone]` at `i`. */
export function clock(text: string, i: number): number {
  const h = digitsEnd(text, i);
  if (h - i < 1 || h - i > 2 || codeAt(text, h) !== 58) return NO_MATCH;
  const m = digitsEnd(text, h + 1);
  if (m - h - 1 !== 2) return NO_MATCH;
  let end = m;
  if (codeAt(text, end) === 58) {
    const s = digitsEnd(text, end + 1);
    if (s - end - 1 === 2) {
      end = s;
      const dot = codeAt(text, end);
      if (dot === 46 || dot === 44) {
        const f = digitsEnd(text, end + 1);
        if (f - end - 1 >= 1 && f - end - 1 <= 9) end = f;
      }
    }
  }
  end = meridiem(text, end);
  end = zone(text, end);
  return bounded(text, end);
}

function meridiem(text: string, end: number): number {
  const j = spacesEnd(text, end, 1);
  for (const word of ['am', 'pm']) if (wordAt(text, j, word)) return j + 2;
  for (const word of ['a.m.', 'p.m.']) {
    if (text.slice(j, j + 4).toLowerCase() === word) return j + 4;
  }
  return end;
}

function zone(text: string, end: number): number {
  let j = spacesEnd(text, end, 1);
  const open = codeAt(text, j) === 40; // "(UTC)"
  if (open) j++;
  const c = codeAt(text, j);
  if (c === 43 || c === 45) {
    // +02:00, -0500
    const a = digitsEnd(text, j + 1);
    if (a - j - 1 === 4) return a;
    if (a - j - 1 === 2 && codeAt(text, a) === 58 && digitsEnd(text, a + 1) - a - 1 === 2) return a + 3;
    return end;
  }
  if (!isUpper(c)) return end;
  let k = j;
  while (k < text.length && k - j <= 5 && isUpper(text.charCodeAt(k))) k++;
  if (isLetter(codeAt(text, k)) || !ZONES.has(text.slice(j, k))) return end;
  if (open) return codeAt(text, k) === 41 ? k + 1 : end;
  // UTC+2, GMT-05:00
  const sign = codeAt(text, k);
  if ((sign === 43 || sign === 45) && isDigit(codeAt(text, k + 1))) {
    const a = digitsEnd(text, k + 1);
    if (a - k - 1 <= 2) return codeAt(text, a) === 58 && digitsEnd(text, a + 1) - a - 1 === 2 ? a + 3 : a;
    if (a - k - 1 === 4) return a;
  }
  return k;
}

/** An optional time after a date: `T15:45`, ` 15:45`, `, 15:45`, ` at 3:45 pm`. */
function timeAfter(text: string, end: number): number {
  const c = codeAt(text, end);
  if (c === 84 && isDigit(codeAt(text, end + 1))) {
    const t = clock(text, end + 1);
    return t > 0 ? t : end;
  }
  let j = end;
  if (c === 44) j++; // ,
  j = spacesEnd(text, j, 2);
  if (j === end) return end;
  if (wordAt(text, j, 'at')) j = spacesEnd(text, j + 2, 2);
  if (!isDigit(codeAt(text, j))) return end;
  const t = clock(text, j);
  return t > 0 ? t : end;
}

/** `2024-05-06`, `2024/05/06`, `06/05/2024`, `6.5.2024`, `06-05-2024`, `5/6/24`, with a time after. */
function numericDate(text: string, i: number): number {
  const a = digitsEnd(text, i);
  const la = a - i;
  const sep = codeAt(text, a);
  if (sep !== 45 && sep !== 47 && sep !== 46) return NO_MATCH;
  const b = digitsEnd(text, a + 1);
  const lb = b - a - 1;
  if (lb < 1 || lb > 2 || codeAt(text, b) !== sep) return NO_MATCH;
  const d = digitsEnd(text, b + 1);
  const ld = d - b - 1;
  let end: number;
  if (la === 4) end = ld >= 1 && ld <= 2 ? d : NO_MATCH;
  else if (la >= 1 && la <= 2) end = ld === 4 || (ld === 2 && sep === 47) ? d : NO_MATCH;
  else end = NO_MATCH;
  if (end === NO_MATCH || (isAlnum(codeAt(text, end)) && codeAt(text, end) !== 84)) return NO_MATCH;
  return bounded(text, timeAfter(text, end));
}

/** A day of the month, optionally with its ordinal suffix: where it ends. */
function dayOfMonth(text: string, i: number): number {
  const d = digitsEnd(text, i);
  if (d - i < 1 || d - i > 2) return NO_MATCH;
  const value = Number(text.slice(i, d));
  if (value < 1 || value > 31) return NO_MATCH;
  for (const suffix of ['st', 'nd', 'rd', 'th']) if (wordAt(text, d, suffix)) return d + 2;
  return isLetter(codeAt(text, d)) ? NO_MATCH : d;
}

/** A month name (with an optional abbreviation dot) at `i`: where it ends. */
function monthName(text: string, i: number): number {
  const end = lettersEnd(text, i);
  if (!MONTHS.has(wordCode(text, i, end))) return NO_MATCH;
  return codeAt(text, end) === 46 ? end + 1 : end;
}

/** An optional `, 2024` or ` 2024` after a day and month. */
function yearAfter(text: string, end: number): number {
  let j = end;
  if (codeAt(text, j) === 44) j++;
  j = spacesEnd(text, j, 2);
  if (j === end) return end;
  const y = digitsEnd(text, j);
  return y - j === 4 && !isAlnum(codeAt(text, y)) ? y : end;
}

/** `6 May 2024`, `06 May 2024 15:45:12 GMT`, `6th of May`. */
function dayMonthDate(text: string, i: number): number {
  const d = dayOfMonth(text, i);
  if (d === NO_MATCH) return NO_MATCH;
  let j = spacesEnd(text, d, 2);
  if (j === d) return NO_MATCH;
  if (wordAt(text, j, 'of')) j = spacesEnd(text, j + 2, 2);
  const m = monthName(text, j);
  if (m === NO_MATCH) return NO_MATCH;
  return bounded(text, timeAfter(text, yearAfter(text, m)));
}

/** `May 6`, `May 6th, 2024 at 3:45 PM`, `Sept. 6 2024`. */
function monthDayDate(text: string, i: number): number {
  const m = monthName(text, i);
  if (m === NO_MATCH) return NO_MATCH;
  const j = spacesEnd(text, m, 2);
  if (j === m) return NO_MATCH;
  const d = dayOfMonth(text, j);
  // "May 2024" (a month of a year, as archives name it) is no moment: only a day makes a date here.
  if (d === NO_MATCH) return NO_MATCH;
  return bounded(text, timeAfter(text, yearAfter(text, d)));
}

/** `Monday, 6 May 2024`, `Mon May 6 2024 15:45:12`, `Tue, 07 May 2024 10:00:00 GMT`: from the weekday's end. */
function weekdayDate(text: string, end: number): number {
  let j = end;
  if (codeAt(text, j) === 46) j++;
  if (codeAt(text, j) === 44) j++;
  j = spacesEnd(text, j, 2);
  if (j === end) return NO_MATCH;
  const c = codeAt(text, j);
  const date = isDigit(c) ? Math.max(dayMonthDate(text, j), numericDate(text, j)) : monthDayDate(text, j);
  return date > j ? date : NO_MATCH;
}

/** `5 minutes ago`, `3h ago`, `2 hrs. ago`. */
function relativeNumber(text: string, i: number): number {
  const n = digitsEnd(text, i);
  if (n - i > 3) return NO_MATCH;
  const j = spacesEnd(text, n, 1);
  const end = lettersEnd(text, j);
  const code = wordCode(text, j, end);
  if (!(j > n ? UNITS.has(code) : SHORT_UNITS.has(code))) return NO_MATCH;
  let k = end;
  if (codeAt(text, k) === 46) k++;
  k = spacesEnd(text, k, 1);
  return wordAt(text, k, 'ago') ? k + 3 : NO_MATCH;
}

/** `a minute ago`, `an hour ago`, `just now`, `moments ago`, `seconds ago`. */
function relativeWords(text: string, i: number): number {
  if (wordAt(text, i, 'just')) {
    const j = spacesEnd(text, i + 4, 1);
    return j > i + 4 && wordAt(text, j, 'now') ? j + 3 : NO_MATCH;
  }
  let j = i;
  if (wordAt(text, i, 'a') || wordAt(text, i, 'an') || wordAt(text, i, 'one') || wordAt(text, i, 'few')) {
    const article = lettersEnd(text, i);
    j = spacesEnd(text, article, 1);
    if (j === article) return NO_MATCH;
  }
  const end = lettersEnd(text, j);
  const code = wordCode(text, j, end);
  if (!(UNITS.has(code) || code === MOMENTS)) return NO_MATCH;
  const k = spacesEnd(text, end, 1);
  return k > end && wordAt(text, k, 'ago') ? k + 3 : NO_MATCH;
}
