/**
 * Values that compete with the one a label owns, inside the label's own value element: a struck-through
 * former price (`<del>$250,000</del> $220,000`), a secondary monthly line (`Est. $1,197/mo`), a badge
 * beside the amount (`<span class="badge">Great deal</span>`), a parenthesised qualifier or subtitle (`Fortunate Harbor <span class="subtitle">(Paperback)</span>`). They are told apart by
 * structure and wording, never by position, and dropped from the value only when something else is
 * left: a field keeps its value rather than losing it to a decoy filter.
 */
import { isElement, type HTMLElement, type Node } from '../outputs/dom';

const STRUCK_TAGS = new Set(['s', 'del', 'strike']);
/** Class or id words of former prices and secondary lines, in the languages the label lexicon speaks. */
const DECOY_WORDS = /(^|[-_\s])(old|was|former|before|strike|struck|crossed|regular|original|list|rrp|msrp|compare|subtitle|secondary|monthly|per-?month|mortgage|estimate|est|finance|instal?ments?|vorher|statt|ancien|avant|antes|badge|pill|chip|ribbon|sticker|flag|deal|discount|savings?)([-_\s]|$)/i;
/** A monthly or estimated amount: `$197/mo`, `€ 850 / Monat`, `per month`, `Est. …`. */
const SECONDARY_TEXT = /(\/\s*(mo|mon|month|monat|mois|mes|mese)\b|\bper\s+month\b|\bmonthly\b|\bpar\s+mois\b|\bpro\s+monat\b|\bal\s+mes\b|^\s*(est\.|estimated|ca\.)\s)/i;

/** A secondary line is short: longer text is never read for the wording test (it would cost a whole block's text). */
const MAX_SECONDARY_TEXT = 120;

/** The element's raw text when it is at most `max` characters, else undefined (stops reading as soon as it is longer). */
function shortText(el: HTMLElement, max: number): string | undefined {
  let text = '';
  const work: Node[] = [el];
  for (let node = work.pop(); node; node = work.pop()) {
    if (isElement(node)) {
      for (let index = node.childNodes.length - 1; index >= 0; index--) work.push(node.childNodes[index] as Node);
    } else {
      text += node.rawText;
      if (text.length > max) return undefined;
    }
  }
  return text.replace(/&nbsp;/g, ' ').replace(/\s+/g, ' ').trim();
}

export function isDecoy(el: HTMLElement): boolean {
  const tag = el.rawTagName ?? '';
  if (STRUCK_TAGS.has(tag)) return true;
  if (/line-through/i.test(el.getAttribute('style') ?? '')) return true;
  const names = `${el.getAttribute('class') ?? ''} ${el.getAttribute('id') ?? ''}`;
  if (DECOY_WORDS.test(names.replace(/([a-z])([A-Z])/g, '$1-$2'))) return true;
  const shown = shortText(el, MAX_SECONDARY_TEXT);
  return shown !== undefined && (SECONDARY_TEXT.test(shown) || /^\(.*\)$/.test(shown));
}
