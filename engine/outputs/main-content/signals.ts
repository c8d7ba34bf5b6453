/**
 * What an element's tag, class, id and role say about it: the evidence the main-content scorer and
 * pruner weigh. Generic words only (no site's own names), so the rules hold on pages never seen.
 */
import type { HTMLElement } from '../dom';

/** Class/id words of page furniture; such elements are dropped before scoring unless they also look like content. */
const UNLIKELY = /-ad-|\bads?\b|adverti|ai2html|banner|breadcrumb|combx|comment|communit|consent|cookie|cover-wrap|disqus|extra|footer|gdpr|header|legends|menu|newsletter|outbrain|pagination|pager|popup|promo|recommend|related|remark|replies|rss|share|sharing|shoutbox|sidebar|skyscraper|social|sponsor|subscri|supplemental|taboola|trending|ad-break|agegate|yom-remote|masthead|toolbar|widget|signup|paywall|modal/i;

/** Words that rescue an unlikely element: containers of the article often carry them. */
const MAYBE = /and|article|body|column|content|main|shadow|story|post|entry|text/i;

/** Class/id words that lower or raise a block's score. */
const NEGATIVE = /-ad-|\bads?\b|hidden|\bhid\b|banner|combx|comment|com-|contact|foot|footnote|gdpr|masthead|media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|sponsor|shopping|tags|tool|widget|cookie|consent|newsletter|subscri|social|breadcrumb|pagination|popup|modal|rail|recommend|trending|byline|author|caption|credit|disclaimer|signup/i;
const POSITIVE = /article|body|content|entry|hentry|h-entry|main|page|post|text|blog|story|prose|markdown/i;

/** ARIA roles of page furniture. */
const FURNITURE_ROLES: ReadonlySet<string> = new Set(['navigation', 'complementary', 'contentinfo', 'banner', 'menu', 'menubar', 'search', 'dialog', 'alertdialog', 'alert', 'toolbar']);

/** Tags that are page furniture wherever they stand. */
export const FURNITURE_TAGS: ReadonlySet<string> = new Set(['nav', 'aside', 'footer', 'dialog', 'menu']);

const classAndId = (el: HTMLElement): string => `${el.getAttribute('class') ?? ''} ${el.getAttribute('id') ?? ''}`;

export function isUnlikely(el: HTMLElement): boolean {
  if (!/class|id/.test(el.rawAttrs)) return false;
  const words = classAndId(el);
  return UNLIKELY.test(words) && !MAYBE.test(words);
}

export function hasFurnitureRole(el: HTMLElement): boolean {
  const role = el.getAttribute('role');
  return role !== undefined && FURNITURE_ROLES.has(role.toLowerCase());
}

/** -25, 0, +25 or 0 for class and id each, as the evidence of their words. */
export function classWeight(el: HTMLElement): number {
  if (!/class|id/.test(el.rawAttrs)) return 0;
  let weight = 0;
  for (const value of [el.getAttribute('class'), el.getAttribute('id')]) {
    if (!value) continue;
    if (NEGATIVE.test(value)) weight -= 25;
    if (POSITIVE.test(value)) weight += 25;
  }
  return weight;
}

/** Starting score of a candidate by its tag: containers of prose score up, lists and headings down. */
export function tagWeight(tag: string): number {
  switch (tag) {
    case 'div':
    case 'article':
    case 'main':
    case 'section':
      return 5;
    case 'pre':
    case 'td':
    case 'blockquote':
      return 3;
    case 'address':
    case 'ol':
    case 'ul':
    case 'dl':
    case 'dd':
    case 'dt':
    case 'li':
    case 'form':
      return -3;
    case 'h1':
    case 'h2':
    case 'h3':
    case 'h4':
    case 'h5':
    case 'h6':
    case 'th':
      return -5;
    default:
      return 0;
  }
}

/** The hint of schema.org's articleBody (and text, reviewBody): the strongest statement a page makes. */
export const ARTICLE_BODY_HINT = 40;

/** The page's own statement of where its article is: schema.org articleBody, `<article>`, `<main>`, role=main. */
export function structuredHint(el: HTMLElement, tag: string): number {
  if (tag === 'article' || tag === 'main') return tag === 'article' ? 20 : 10;
  if (!/itemprop|role/.test(el.rawAttrs)) return 0;
  const itemprop = el.getAttribute('itemprop');
  if (itemprop && /\b(?:articleBody|text|reviewBody)\b/.test(itemprop)) return ARTICLE_BODY_HINT;
  if (el.getAttribute('role') === 'main') return 10;
  return 0;
}
