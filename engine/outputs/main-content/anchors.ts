/**
 * Where the page says its article is, beyond block scores: its headline and the parts of its body.
 * - The headline: the `h1` (else an `h2`) whose words are the title the page states (OpenGraph,
 *   JSON-LD, `<title>`). The article is the prose next to it; a longer block elsewhere (a rail of
 *   teasers beside a short story, the next article appended below) is a neighbour, not the article.
 * - The parts: a body the page split around mid-article asides (a pull quote, a promo box, an ad slot)
 *   into blocks of the same tag and class, which may sit in wrappers of their own; the article is all
 *   of them, not the longest.
 */
import { type HTMLElement, isElement, tagOf } from '../dom';
import type { StatsCache } from './stats';

const HEADINGS = ['h1', 'h2'] as const;
/** Share of the title's words a heading must hold (and of its own words the title must hold). */
const TITLE_WORDS = 0.7;
const MAX_HEADING_CHARS = 300;

const words = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

function matchesTitle(heading: string, title: readonly string[]): boolean {
  const own = words(heading);
  if (own.length === 0 || title.length === 0) return false;
  const inTitle = new Set(title);
  const inHeading = new Set(own);
  const held = title.filter((word) => inHeading.has(word)).length / title.length;
  const ownHeld = own.filter((word) => inTitle.has(word)).length / own.length;
  // A `<title>` often adds the site's name: the heading must be most of the title and nearly all title.
  return ownHeld >= TITLE_WORDS && (held >= TITLE_WORDS || own.length >= 3);
}

/** The page's headline element: the first `h1` (else `h2`) saying the stated title. */
export function headlineOf(body: HTMLElement, title: string | null): HTMLElement | undefined {
  if (!title) return undefined;
  const wanted = words(title);
  for (const tag of HEADINGS) {
    for (const heading of body.querySelectorAll(tag)) {
      const text = heading.text;
      if (text.length <= MAX_HEADING_CHARS && matchesTitle(text, wanted)) return heading;
    }
  }
  return undefined;
}

export function contains(ancestor: HTMLElement, el: HTMLElement): boolean {
  for (let node: HTMLElement | null = el; node; node = node.parentNode) if (node === ancestor) return true;
  return false;
}

/** A candidate near the headline must have this share of the best block's prose to be the article instead. */
const NEAR_HEADLINE = 0.25;
/** ... and this many characters: a standfirst beside the headline is not the story. */
const NEAR_HEADLINE_CHARS = 200;
/** Levels above the headline searched for its article. */
const HEADLINE_LEVELS = 6;

/**
 * The article next to the headline, when the best block is not: going up from the headline, the first
 * ancestor holding a candidate with a fair share of the best block's prose (points its paragraphs
 * gave, class words aside); that candidate is the article when the best block lies outside that
 * ancestor. Undefined when the best block is next to the headline already (or there is no headline).
 */
export function besideHeadline(headline: HTMLElement | undefined, top: HTMLElement, ranked: ReadonlyArray<[HTMLElement, number]>, prose: (el: HTMLElement) => number, stats: StatsCache): HTMLElement | undefined {
  if (!headline) return undefined;
  const wanted = prose(top) * NEAR_HEADLINE;
  let ancestor: HTMLElement | null = headline.parentNode;
  for (let level = 0; ancestor && level < HEADLINE_LEVELS; level++, ancestor = ancestor.parentNode) {
    const tag = tagOf(ancestor);
    if (tag === 'body' || tag === 'html') return undefined;
    if (contains(ancestor, top)) return undefined;
    const inside = ranked.find(([el]) => el !== ancestor && prose(el) >= wanted && stats.of(el).chars >= NEAR_HEADLINE_CHARS && contains(ancestor!, el));
    if (inside) return inside[0];
  }
  return undefined;
}

/** Whether `top` is the headline's article: inside one of the headline's nearest ancestors. */
export function nextToHeadline(headline: HTMLElement | undefined, top: HTMLElement): boolean {
  if (!headline) return false;
  let ancestor: HTMLElement | null = headline.parentNode;
  for (let level = 0; ancestor && level < HEADLINE_LEVELS; level++, ancestor = ancestor.parentNode) {
    const tag = tagOf(ancestor);
    if (tag === 'body' || tag === 'html') return false;
    if (contains(ancestor, top)) return true;
  }
  return false;
}

/** Class of a part must be this specific: one generic word ("row", "col") names too many blocks. */
const classKey = (el: HTMLElement): string => {
  const value = (el.getAttribute('class') ?? '').trim().replace(/\s+/g, ' ');
  return value ? `${tagOf(el)}.${value}` : '';
};

/** Levels above the article searched for its other parts. */
const PART_LEVELS = 3;
/** Characters a part must hold, and the link density it must stay under. */
const PART_CHARS = 150;
const PART_LINKS = 0.3;
/** The parts together hold at least this share of the ancestor that joins them. */
const PARTS_SHARE = 0.6;

/**
 * The article's parts: other elements of the article block's tag and class (or of one of its wrappers'
 * up to two levels) under a common ancestor a few levels up, each holding prose. Returns that ancestor
 * when the parts make up most of it, else undefined; never one holding `fence` (a neighbour of the
 * headline's article, such as the next article, whose body has the same class).
 */
export function partsAncestor(top: HTMLElement, stats: StatsCache, fence?: HTMLElement): HTMLElement | undefined {
  for (let wrapper: HTMLElement | null = top, up = 0; wrapper && up <= 2; wrapper = wrapper.parentNode, up++) {
    const key = classKey(wrapper);
    if (!key || tagOf(wrapper) === 'body') continue;
    let ancestor: HTMLElement | null = wrapper.parentNode;
    for (let level = 1; ancestor && level <= PART_LEVELS; level++, ancestor = ancestor.parentNode) {
      const tag = tagOf(ancestor);
      if (tag === 'body' || tag === 'html' || (fence && contains(ancestor, fence))) break;
      const parts = sameKey(ancestor, key).filter((part) => part === wrapper || (stats.of(part).chars >= PART_CHARS && stats.linkDensity(part) < PART_LINKS));
      if (parts.length < 2) continue;
      const held = parts.reduce((sum, part) => sum + stats.of(part).chars, 0);
      if (held >= stats.of(ancestor).chars * PARTS_SHARE) return ancestor;
      break;
    }
  }
  return undefined;
}

/** Descendants of `root` with the class key `key` (not nested in one another). */
function sameKey(root: HTMLElement, key: string): HTMLElement[] {
  const found: HTMLElement[] = [];
  const stack: HTMLElement[] = [root];
  for (let el = stack.pop(); el; el = stack.pop()) {
    for (const child of el.childNodes) {
      if (!isElement(child)) continue;
      if (classKey(child) === key) found.push(child);
      else stack.push(child);
    }
  }
  return found;
}

/** Paragraphs a part holds (or characters), so one teaser with a summary is no part. */
const PART_PARAGRAPHS = 2;
const PART_LONG = 400;
/** Parts hold at least this share of the article between them. */
const PARTS_OF_ARTICLE = 0.3;

/**
 * Blocks of the chosen article that are parts of its body: two or more elements of one tag and class,
 * each holding prose (a few paragraphs, few links), together a fair share of the article. Pruning
 * keeps them whatever their class words say (a body wrapper named `…--adrail` is still the body).
 */
export function articleParts(article: HTMLElement, stats: StatsCache): Set<HTMLElement> {
  const byKey = new Map<string, HTMLElement[]>();
  const stack: HTMLElement[] = [article];
  for (let el = stack.pop(); el; el = stack.pop()) {
    for (const child of el.childNodes) {
      if (!isElement(child)) continue;
      stack.push(child);
      const key = classKey(child);
      if (!key) continue;
      const { chars } = stats.of(child);
      if (chars < PART_CHARS || stats.linkDensity(child) >= PART_LINKS) continue;
      if (chars < PART_LONG && child.querySelectorAll('p').length < PART_PARAGRAPHS) continue;
      byKey.set(key, [...(byKey.get(key) ?? []), child]);
    }
  }
  const total = stats.of(article).chars;
  const parts = new Set<HTMLElement>();
  for (const members of byKey.values()) {
    const outer = members.filter((el) => !members.some((other) => other !== el && contains(other, el)));
    if (outer.length >= 2 && outer.reduce((sum, el) => sum + stats.of(el).chars, 0) >= total * PARTS_OF_ARTICLE) for (const el of outer) parts.add(el);
  }
  return parts;
}

const TEASER_HEADINGS: ReadonlySet<string> = new Set(['h2', 'h3', 'h4', 'h5']);

/**
 * Whether a paragraph is a teaser's summary: the first block of its parent is a heading that is mostly
 * a link to elsewhere (`<h3><a href="/news/…">Headline</a></h3><p>Summary…</p>`), as in the items of a
 * rail of other stories. An article's own subheadings are not links.
 */
export function isTeaser(paragraph: HTMLElement, stats: StatsCache): boolean {
  const parent = paragraph.parentNode;
  if (!parent) return false;
  const first = parent.childNodes.find(isElement);
  if (!first || first === paragraph || !TEASER_HEADINGS.has(tagOf(first))) return false;
  const { chars, linkChars } = stats.of(first);
  return chars > 0 && linkChars / chars >= 0.8;
}
