/**
 * Contact details and hashtags found in a page: `mailto:`/`tel:` links first, then patterns over the
 * visible text (code blocks excluded, so `#include` or an address in a snippet is not picked up).
 */
import { OrderedSet, type Page } from './page';

/** Lengths are bounded (RFC 5321 limits) so a long run of text cannot make matching quadratic. */
const EMAIL = /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.){1,8}[A-Za-z]{2,24}(?![A-Za-z0-9-])/g;
const EMAIL_EXACT = new RegExp(`^${EMAIL.source}$`);
/** Leading and trailing dots removed, by hand (`\.+$` rescans a long inner run of dots from each of them). */
function withoutEdgeDots(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && text.charCodeAt(start) === 0x2e) start++;
  while (end > start && text.charCodeAt(end - 1) === 0x2e) end--;
  return text.slice(start, end);
}

/** Retina image names (`logo@2x.png`) look like addresses; these endings are files, not domains. */
const FILE_ENDING = /\.(?:png|jpe?g|gif|svg|webp|avif|ico|bmp|css|js|json|html?)$/i;

function cleanEmail(value: string): string | undefined {
  const email = withoutEdgeDots(value.trim());
  return EMAIL_EXACT.test(email) && !FILE_ENDING.test(email) ? email.toLowerCase() : undefined;
}

export function emails(page: Page): string[] {
  const found = new OrderedSet();
  for (const a of page.root.querySelectorAll('a[href^="mailto:" i]')) {
    const target = (a.getAttribute('href') ?? '').slice('mailto:'.length).split('?')[0] ?? '';
    let decoded = target;
    try {
      decoded = decodeURIComponent(target);
    } catch {
      // a malformed escape: use the address as written
    }
    for (const address of decoded.split(',')) found.add(cleanEmail(address));
  }
  for (const match of page.prose.matchAll(EMAIL)) found.add(cleanEmail(match[0]));
  return found.values;
}

/**
 * Candidate phone numbers: an optional `+`, digit groups separated by one space, dot or dash, an
 * optional bracketed area code. `phoneShape` then decides, so dates, IP addresses, prices, years
 * and reference numbers are not reported.
 */
const PHONE_CANDIDATE = /(?<![\w+/.,-])(?:\+\d{1,3}|\(\d{1,5}\)|\d{1,6})(?:[ .-]?\(\d{1,5}\)|[ .-]\d{1,6}){1,7}(?![\w-]|[.,]\d)/g;

function phoneShape(candidate: string): boolean {
  const groups = candidate.split(/[ .\-()]+/).filter(Boolean);
  const digits = groups.join('').replace(/^\+/, '');
  if (digits.length < 8 || digits.length > 15) return false;
  if (/^\d{1,3}(?:\.\d{1,3}){3}$/.test(candidate)) return false; // IPv4 address
  if (/^\d{4}[-./]\d{1,2}[-./]\d{1,2}$|^\d{1,2}[-./]\d{1,2}[-./]\d{4}$/.test(candidate)) return false; // date
  if (candidate.startsWith('+') || candidate.includes('(')) return true;
  const first = groups[0] ?? '';
  const last = groups[groups.length - 1] ?? '';
  if (groups.some((g) => g.length < 2)) return false;
  // Without an international or area-code marker, ask for a trunk prefix (0...) or a phone-like split.
  if (groups.length === 2) return first.startsWith('0') && digits.length >= 10;
  return first.startsWith('0') || (last.length >= 3 && digits.length >= 9);
}

/** The last nine digits identify a number whether written with its country code or its trunk prefix. */
const digitsKey = (phone: string): string => phone.replace(/\D/g, '').slice(-9);

export function phoneNumbers(page: Page): string[] {
  const found = new OrderedSet();
  for (const a of page.root.querySelectorAll('a[href^="tel:" i]')) {
    let number = (a.getAttribute('href') ?? '').slice('tel:'.length).split(';')[0] ?? '';
    try {
      number = decodeURIComponent(number);
    } catch {
      // keep as written
    }
    number = number.trim();
    if (digitsKey(number).length >= 3) found.add(number, digitsKey(number));
  }
  for (const match of page.prose.matchAll(PHONE_CANDIDATE)) {
    if (phoneShape(match[0])) found.add(match[0], digitsKey(match[0]));
  }
  return found.values;
}

const HASHTAG = /(?<![\p{L}\p{N}_&#/])#([\p{L}\p{N}_]{1,100})(?![\p{L}\p{N}_])/gu;
const HEX_COLOUR = /^(?:[0-9a-f]{3}|[0-9a-f]{6})$/i;

export function hashtags(page: Page): string[] {
  const found = new OrderedSet();
  for (const match of page.prose.matchAll(HASHTAG)) {
    const tag = match[1] ?? '';
    // A tag needs a letter ("#1" is a rank) and is not a CSS colour ("#fff").
    if (!/\p{L}/u.test(tag) || HEX_COLOUR.test(tag)) continue;
    found.add(`#${tag}`, tag.toLowerCase());
  }
  return found.values;
}
