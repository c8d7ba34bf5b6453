/**
 * Values that compete with the one a label owns, inside the label's own value element: a struck-through
 * former price (`<del>$250,000</del> $220,000`), a secondary monthly line (`Est. $1,197/mo`), a
 * parenthesised qualifier or subtitle (`Fortunate Harbor <span class="subtitle">(Paperback)</span>`). They are told apart by
 * structure and wording, never by position, and dropped from the value only when something else is
 * left: a field keeps its value rather than losing it to a decoy filter.
 */
import type { HTMLElement } from '../outputs/dom';

const STRUCK_TAGS = new Set(['s', 'del', 'strike']);
/** Class or id words of former prices and secondary lines, in the languages the label lexicon speaks. */
const DECOY_WORDS = /(^|[-_\s])(old|was|former|before|strike|struck|crossed|regular|original|list|rrp|msrp|compare|subtitle|secondary|monthly|per-?month|mortgage|estimate|est|finance|instal?ments?|vorher|statt|ancien|avant|antes)([-_\s]|$)/i;
/** A monthly or estimated amount: `$197/mo`, `€ 850 / Monat`, `per month`, `Est. …`. */
const SECONDARY_TEXT = /(\/\s*(mo|mon|month|monat|mois|mes|mese)\b|\bper\s+month\b|\bmonthly\b|\bpar\s+mois\b|\bpro\s+monat\b|\bal\s+mes\b|^\s*(est\.|estimated|ca\.)\s)/i;

export function isDecoy(el: HTMLElement, text: () => string): boolean {
  const tag = el.rawTagName ?? '';
  if (STRUCK_TAGS.has(tag)) return true;
  if (/line-through/i.test(el.getAttribute('style') ?? '')) return true;
  const names = `${el.getAttribute('class') ?? ''} ${el.getAttribute('id') ?? ''}`;
  if (DECOY_WORDS.test(names.replace(/([a-z])([A-Z])/g, '$1-$2'))) return true;
  const shown = text();
  return SECONDARY_TEXT.test(shown) || /^\(.*\)$/.test(shown.trim());
}
