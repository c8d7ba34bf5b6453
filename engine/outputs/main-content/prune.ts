/**
 * Boilerplate removal. Before scoring: what is never the article (scripts, hidden parts, navigation,
 * asides, footers, cookie banners, share bars by their class words). After choosing the article:
 * blocks inside it that read like furniture (mostly links, more list items than paragraphs, forms,
 * image strips), in the manner of Readability's conditional cleaning.
 */
import { type HTMLElement, BLOCK_TAGS, NOISE_TAGS, isElement, isHidden, tagOf } from '../dom';
import { articleParts } from './anchors';
import { FURNITURE_TAGS, classWeight, hasFurnitureRole, isUnlikely, structuredHint } from './signals';
import type { StatsCache } from './stats';

/** Never removed by their class words: the document's frame and the page's own content markers. */
const KEEP_TAGS: ReadonlySet<string> = new Set(['html', 'body', 'article', 'main', 'a', 'table', 'tbody', 'thead', 'tr', 'td', 'th', 'pre', 'code', 'p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6']);

export interface StripOptions {
  /** Drop elements whose class/id words say furniture (off in the retry for pages that use them everywhere). */
  unlikely: boolean;
}

/** Removes what is never the article, in place. */
export function stripFurniture(body: HTMLElement, options: StripOptions): void {
  const stack: HTMLElement[] = [body];
  for (let el = stack.pop(); el; el = stack.pop()) {
    const kept = [];
    for (const child of el.childNodes) {
      if (isElement(child) && isFurniture(child, options)) continue;
      kept.push(child);
      if (isElement(child)) stack.push(child);
    }
    if (kept.length !== el.childNodes.length) el.childNodes = kept;
  }
}

function isFurniture(el: HTMLElement, options: StripOptions): boolean {
  const tag = tagOf(el);
  if (NOISE_TAGS.has(tag) || isHidden(el)) return true;
  if (structuredHint(el, tag) > 0) return false;
  if (FURNITURE_TAGS.has(tag) || hasFurnitureRole(el)) return true;
  if ((tag === 'header' || tag === 'form') && !el.querySelector('article, main, [itemprop~="articleBody"]') && el.rawText.length < 6000) return tag === 'header' || !el.querySelector('p');
  if (options.unlikely && !KEEP_TAGS.has(tag) && isUnlikely(el)) return true;
  return false;
}

const LIST_TAGS: ReadonlySet<string> = new Set(['ul', 'ol']);
const CONDITIONAL_TAGS: ReadonlySet<string> = new Set(['div', 'section', 'ul', 'ol', 'table', 'form', 'fieldset', 'figure', 'header', 'span', 'dl']);
const HEADINGS: ReadonlySet<string> = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);

interface Counts {
  p: number;
  img: number;
  li: number;
  input: number;
  embed: number;
  headingChars: number;
}

/** A `<div>` used as a paragraph: text of its own and no block inside (pages written without `<p>`). */
function isTextDiv(div: HTMLElement, stats: StatsCache): boolean {
  if (stats.of(div).chars < 25) return false;
  return !div.childNodes.some((child) => isElement(child) && BLOCK_TAGS.has(tagOf(child)));
}

function count(el: HTMLElement, stats: StatsCache): Counts {
  const counts: Counts = { p: 0, img: 0, li: 0, input: 0, embed: 0, headingChars: 0 };
  const stack: HTMLElement[] = [el];
  for (let node = stack.pop(); node; node = stack.pop()) {
    for (const child of node.childNodes) {
      if (!isElement(child)) continue;
      const tag = tagOf(child);
      if (tag === 'p' || tag === 'pre' || (tag === 'div' && isTextDiv(child, stats))) counts.p++;
      else if (tag === 'img' || tag === 'picture') counts.img++;
      else if (tag === 'li') counts.li++;
      else if (tag === 'input' || tag === 'select' || tag === 'textarea') counts.input++;
      else if (tag === 'embed' || tag === 'object' || tag === 'iframe' || tag === 'video') counts.embed++;
      if (HEADINGS.has(tag)) counts.headingChars += stats.of(child).chars;
      else stack.push(child);
    }
  }
  return counts;
}

/** A table of data (header cells, a caption, or a grid of several rows and columns), not a layout table. */
function isDataTable(table: HTMLElement): boolean {
  if (table.getAttribute('role') === 'presentation') return false;
  if (table.querySelector('th, caption, thead')) return true;
  const rows = table.querySelectorAll('tr');
  if (rows.length < 3) return false;
  if (table.querySelector('table')) return false;
  return (rows[0]?.childNodes.filter(isElement).length ?? 0) >= 2;
}

/** Whether a block inside the chosen article reads like furniture. */
function isBoilerplate(el: HTMLElement, tag: string, stats: StatsCache, score: number): boolean {
  if (tag === 'table' && isDataTable(el)) return false;
  // Prose around code or a table is the article's own, whatever its class says.
  if (stats.of(el).chars > 200 && stats.linkDensity(el) < 0.3 && el.querySelector('pre, table') !== null) return false;
  const weight = classWeight(el);
  if (weight + score < 0) return true;
  const { chars, commas } = stats.of(el);
  if (commas >= 10) return false;
  const c = count(el, stats);
  const isList = LIST_TAGS.has(tag);
  const linkDensity = stats.linkDensity(el);
  const headingDensity = chars === 0 ? 0 : c.headingChars / chars;
  // An image strip; pictures between paragraphs of prose are the article's own.
  if (c.img > 1 && c.p / c.img < 0.5 && tag !== 'figure' && (chars < 200 || linkDensity > 0.25)) return true;
  // A block left with nothing but its heading ("Related", "Comments") once its list went.
  if (chars > 0 && headingDensity >= 0.9 && c.img === 0 && !isList) return true;
  if (!isList && c.li - 100 > c.p) return true;
  if (c.input > Math.floor(c.p / 3)) return true;
  if (!isList && headingDensity < 0.9 && chars < 25 && (c.img === 0 || c.img > 2) && linkDensity > 0) return true;
  if (!isList && weight < 25 && linkDensity > 0.2) return true;
  if (isList && linkDensity > 0.5 && c.li > 2) return true;
  if (weight >= 25 && linkDensity > 0.5) return true;
  if ((c.embed === 1 && chars < 75) || c.embed > 1) return true;
  return false;
}

/** Class/id words of the lines around an article's text: who wrote it and when. */
const BYLINE = /byline|dateline|author|entry-meta|post-meta|article-meta|posted-on|timestamp|publish-date|pubdate/i;

/** A short line naming the author or the date, which the metadata carries. */
function isByline(el: HTMLElement, stats: StatsCache): boolean {
  if (!/class|id|rel|itemprop/.test(el.rawAttrs)) return false;
  const words = `${el.getAttribute('class') ?? ''} ${el.getAttribute('id') ?? ''} ${el.getAttribute('rel') ?? ''} ${el.getAttribute('itemprop') ?? ''}`;
  return BYLINE.test(words) && stats.of(el).chars < 200;
}

/** Removes furniture blocks inside the article, deepest first, in place; the article's parts (anchors.ts) stay. */
export function cleanArticle(article: HTMLElement, stats: StatsCache, scores: Map<HTMLElement, number>): void {
  const parts = articleParts(article, stats);
  const order: HTMLElement[] = [];
  const stack: HTMLElement[] = [article];
  for (let el = stack.pop(); el; el = stack.pop()) {
    order.push(el);
    for (const child of el.childNodes) if (isElement(child) && tagOf(child) !== 'pre') stack.push(child);
  }
  // Parents after their children: a block judged without the furniture it held.
  for (let i = order.length - 1; i > 0; i--) {
    const el = order[i] as HTMLElement;
    const tag = tagOf(el);
    const parent = el.parentNode;
    if (!parent || parts.has(el)) continue;
    const remove =
      isByline(el, stats) ||
      (CONDITIONAL_TAGS.has(tag) && isBoilerplate(el, tag, stats, scores.get(el) ?? 0)) ||
      (HEADINGS.has(tag) && classWeight(el) < 0) ||
      (tag !== 'img' && tag !== 'br' && tag !== 'hr' && CONDITIONAL_TAGS.has(tag) && stats.of(el).chars === 0 && !el.querySelector('img, picture, video, audio, hr, br'));
    if (remove) {
      parent.removeChild(el);
      stats.invalidate(parent);
    }
  }
}
