/**
 * Character tests and bounded runs for the hand-written scanners. Every scanner of this folder moves
 * forward through its text and looks ahead or behind by a bounded number of characters, so a page's
 * cost is linear in its length whatever it holds (no regular expression can backtrack on it).
 */

export const isDigit = (c: number): boolean => c >= 48 && c <= 57;
export const isUpper = (c: number): boolean => c >= 65 && c <= 90;
export const isLower = (c: number): boolean => c >= 97 && c <= 122;
export const isLetter = (c: number): boolean => isUpper(c) || isLower(c);
export const isAlnum = (c: number): boolean => isDigit(c) || isLetter(c);
export const isHex = (c: number): boolean => isDigit(c) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
/** Characters of random tokens besides letters and digits (base64, base64url, hyphenated ids). */
export const isTokenJoin = (c: number): boolean => c === 43 || c === 47 || c === 61 || c === 95 || c === 45; // + / = _ -

/** `text.charCodeAt(i)`, or -1 past the end (never a character class). */
export const codeAt = (text: string, i: number): number => (i < text.length ? text.charCodeAt(i) : -1);

/** End of the run of digits starting at `i` (`i` when there is none). */
export function digitsEnd(text: string, i: number): number {
  let j = i;
  while (j < text.length && isDigit(text.charCodeAt(j))) j++;
  return j;
}

/** End of the run of ASCII letters starting at `i`. */
export function lettersEnd(text: string, i: number): number {
  let j = i;
  while (j < text.length && isLetter(text.charCodeAt(j))) j++;
  return j;
}

/** Whether `word` (lower case) is at `i`, case-insensitively, not followed by a letter. */
export function wordAt(text: string, i: number, word: string): boolean {
  if (i + word.length > text.length) return false;
  for (let k = 0; k < word.length; k++) {
    let c = text.charCodeAt(i + k);
    if (isUpper(c)) c += 32;
    if (c !== word.charCodeAt(k)) return false;
  }
  return !isLetter(codeAt(text, i + word.length));
}

/** The letter word at `i`, lower case, and where it ends (at most `max` letters: longer words are no keyword). */
export function lowerWordAt(text: string, i: number, max = 16): { word: string; end: number } {
  const end = lettersEnd(text, i);
  return { word: end - i <= max ? text.slice(i, end).toLowerCase() : '', end };
}

/** Skips spaces (at most `max`). */
export function spacesEnd(text: string, i: number, max = 3): number {
  let j = i;
  while (j < text.length && j - i < max && (text.charCodeAt(j) === 32 || text.charCodeAt(j) === 0xa0)) j++;
  return j;
}

/**
 * The letter words before `i`, nearest first, lower case: at most `count` words within `reach`
 * characters, looking through spaces, digits (a masked date between a label and its value) and the
 * punctuation that joins a label to its value.
 */
export function wordsBefore(text: string, i: number, count: number, reach = 40): string[] {
  const words: string[] = [];
  const stop = Math.max(0, i - reach);
  let j = i - 1;
  while (words.length < count && j >= stop) {
    const c = text.charCodeAt(j);
    if (isLetter(c)) {
      const end = j + 1;
      while (j >= stop && isLetter(text.charCodeAt(j))) j--;
      // A word glued to digits ("req_8f3a") is part of a token, not a label.
      words.push(text.slice(j + 1, end).toLowerCase());
      continue;
    }
    if (isDigit(c) || c === 32 || c === 0xa0 || c === 58 || c === 35 || c === 61 || c === 45 || c === 95 || c === 42 || c === 46 || c === 44 || c === 40 || c === 91) {
      j--; // space : # = - _ * . , ( [
      continue;
    }
    break;
  }
  return words;
}

/** Longest word `wordCode` packs (27^11 < 2^53). */
const CODE_LETTERS = 11;

/**
 * The letters `text[start, end)` lower-cased and packed into one number (base 27), or -1 when they
 * are more than eleven: keyword look-ups without making a string for every word of a page.
 */
export function wordCode(text: string, start: number, end: number): number {
  if (end - start > CODE_LETTERS || end <= start) return -1;
  let code = 0;
  for (let j = start; j < end; j++) code = code * 27 + ((text.charCodeAt(j) | 0x20) - 96);
  return code;
}

/** The codes of a list of lower-case words. */
export const wordCodes = (words: readonly string[]): ReadonlySet<number> => new Set(words.map((word) => wordCode(word, 0, word.length)));
