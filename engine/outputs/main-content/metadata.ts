/**
 * The article's title, byline and publication date as the page states them: OpenGraph and article
 * `<meta>`, schema.org JSON-LD and microdata, then the visible markup (`<h1>`, `rel=author`,
 * `<time datetime>`). Nothing is guessed from free text.
 */
import { type HTMLElement, collapseWhitespace, visibleText } from '../dom';

export interface ArticleMetadata {
  title: string | null;
  byline: string | null;
  date: string | null;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const clean = (value: string | undefined | null): string | null => {
  const text = value === undefined || value === null ? '' : collapseWhitespace(value).trim();
  return text === '' ? null : text.slice(0, 500);
};

function metaContent(head: HTMLElement, names: string[]): string | null {
  for (const name of names) {
    const el = head.querySelector(`meta[property="${name}"], meta[name="${name}"], meta[itemprop="${name}"]`);
    const value = clean(el?.getAttribute('content'));
    if (value) return value;
  }
  return null;
}

/** JSON-LD objects of the page, `@graph` members flattened; invalid blocks skipped. */
function jsonLdObjects(root: HTMLElement): Record<string, Json>[] {
  const out: Record<string, Json>[] = [];
  const visit = (value: Json, depth: number): void => {
    if (depth > 4 || value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const item of value) visit(item, depth + 1);
      return;
    }
    out.push(value);
    if (value['@graph']) visit(value['@graph'], depth + 1);
  };
  for (const script of root.querySelectorAll('script[type="application/ld+json"]')) {
    try {
      visit(JSON.parse(script.rawText) as Json, 0);
    } catch {
      // A broken block states nothing.
    }
  }
  return out;
}

const ARTICLE_TYPE = /Article|Posting|Report|BlogPosting|NewsArticle|WebPage|Review|Recipe|QAPage|DiscussionForumPosting/;

function isArticle(item: Record<string, Json>): boolean {
  const type = item['@type'];
  const types = Array.isArray(type) ? type : [type];
  return types.some((t) => typeof t === 'string' && ARTICLE_TYPE.test(t));
}

function personName(value: Json | undefined): string | null {
  if (typeof value === 'string') return clean(value);
  if (Array.isArray(value)) {
    const names = value.map(personName).filter((name): name is string => name !== null);
    return names.length > 0 ? names.join(', ') : null;
  }
  if (value && typeof value === 'object' && typeof value.name === 'string') return clean(value.name);
  return null;
}

const isUrl = (value: string): boolean => /^https?:\/\//i.test(value);

export function articleMetadata(root: HTMLElement, head: HTMLElement | undefined, body: HTMLElement): ArticleMetadata {
  const meta = head ?? root;
  const ld = jsonLdObjects(root).filter(isArticle);
  const fromLd = (key: string): Json | undefined => ld.find((item) => item[key] !== undefined)?.[key];
  const ldString = (key: string): string | null => {
    const value = fromLd(key);
    return typeof value === 'string' ? clean(value) : null;
  };

  const title =
    metaContent(meta, ['og:title', 'twitter:title']) ??
    ldString('headline') ??
    clean(body.querySelector('h1') ? visibleText(body.querySelector('h1') as HTMLElement) : null) ??
    clean(meta.querySelector('title')?.text);

  const metaAuthor = metaContent(meta, ['author', 'article:author', 'dc.creator', 'parsely-author', 'sailthru.author']);
  const byline =
    (metaAuthor && !isUrl(metaAuthor) ? metaAuthor : null) ??
    personName(fromLd('author')) ??
    clean(body.querySelector('[itemprop~="author"] [itemprop~="name"]')?.text) ??
    clean(body.querySelector('[itemprop~="author"], [rel~="author"], .byline, .author')?.text);

  const dated = body.querySelector('[itemprop~="datePublished"]');
  const date =
    metaContent(meta, ['article:published_time', 'og:published_time', 'datePublished', 'date', 'pubdate', 'dc.date', 'dc.date.issued', 'sailthru.date']) ??
    ldString('datePublished') ??
    clean(dated?.getAttribute('content') ?? dated?.getAttribute('datetime')) ??
    clean(body.querySelector('time[datetime]')?.getAttribute('datetime'));

  return { title, byline: byline && byline.length <= 200 ? byline : null, date };
}
