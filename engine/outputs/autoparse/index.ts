/**
 * `autoparse`: a generic JSON reading of any page: structured data the page declares (JSON-LD,
 * microdata, OpenGraph, Twitter cards) and what every page has (title, description, keywords,
 * canonical URL, language, headings, links).
 */
import { collapseWhitespace, visibleText } from '../dom';
import { type Page, isWebUrl, loadPage } from '../extract/page';
import { type Headings, headings } from '../extract/structure';
import { jsonLd } from './jsonld';
import { type MicrodataItem, microdata } from './microdata';

/** Links beyond this many add size, not understanding. */
export const AUTOPARSE_LINK_LIMIT = 100;

export type MetaGroup = Record<string, string | string[]>;

/** Every key is always present (null or empty when the page has nothing for it), so clients can rely on the shape. */
export interface Autoparsed {
  url: string;
  title: string | null;
  description: string | null;
  keywords: string[];
  canonical: string | null;
  language: string | null;
  json_ld: unknown[];
  microdata: MicrodataItem[];
  open_graph: MetaGroup;
  twitter: MetaGroup;
  headings: Headings;
  links: { text: string; url: string }[];
}

/** Meta values whose key starts with one of the prefixes; `og:` is dropped from keys, other prefixes kept. */
function metaGroup(page: Page, prefixes: readonly string[], strip: string): MetaGroup {
  const group = Object.create(null) as MetaGroup;
  for (const meta of page.root.querySelectorAll('meta[content]')) {
    const key = (meta.getAttribute('property') ?? meta.getAttribute('name') ?? '').trim().toLowerCase();
    if (!prefixes.some((prefix) => key.startsWith(prefix))) continue;
    const name = key.startsWith(strip) ? key.slice(strip.length) : key;
    const value = collapseWhitespace(meta.getAttribute('content') ?? '').trim();
    const current = group[name];
    if (current === undefined) group[name] = value;
    else if (Array.isArray(current)) current.push(value);
    else group[name] = [current, value];
  }
  return group;
}

function metaContent(page: Page, name: string): string | undefined {
  const meta = page.root.querySelectorAll('meta[name][content]').find((m) => m.getAttribute('name')?.trim().toLowerCase() === name);
  const value = meta && collapseWhitespace(meta.getAttribute('content') ?? '').trim();
  return value || undefined;
}

function pageLinks(page: Page): { text: string; url: string }[] {
  const seen = new Set<string>();
  const out: { text: string; url: string }[] = [];
  for (const a of page.body.querySelectorAll('a[href]')) {
    const url = page.resolve(a.getAttribute('href'));
    if (!isWebUrl(url) || seen.has(url)) continue;
    seen.add(url);
    out.push({ text: visibleText(a) || (a.getAttribute('aria-label') ?? a.getAttribute('title') ?? '').trim(), url });
    if (out.length === AUTOPARSE_LINK_LIMIT) break;
  }
  return out;
}

const first = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

function documentTitle(page: Page): string | undefined {
  const title = (page.head ?? page.root).querySelector('title');
  return (title && collapseWhitespace(title.text).trim()) || undefined;
}

function canonicalUrl(page: Page): string | undefined {
  const link = page.root
    .querySelectorAll('link[rel][href]')
    .find((l) => (l.getAttribute('rel') ?? '').toLowerCase().split(/\s+/).includes('canonical'));
  return page.resolve(link?.getAttribute('href'));
}

function language(page: Page, openGraph: MetaGroup): string | undefined {
  const html = page.root.querySelector('html')?.getAttribute('lang')?.trim();
  if (html) return html;
  const header = page.root
    .querySelectorAll('meta[http-equiv][content]')
    .find((m) => m.getAttribute('http-equiv')?.trim().toLowerCase() === 'content-language');
  return header?.getAttribute('content')?.trim() || first(openGraph.locale);
}

export function autoparse(html: string, url: string): Autoparsed {
  const page = loadPage(html, url);
  const openGraph = metaGroup(page, ['og:', 'article:', 'book:', 'profile:', 'product:', 'music:', 'video:'], 'og:');
  return {
    url,
    title: documentTitle(page) ?? first(openGraph.title) ?? null,
    description: metaContent(page, 'description') ?? first(openGraph.description) ?? null,
    keywords: (metaContent(page, 'keywords') ?? '').split(',').map((k) => k.trim()).filter(Boolean),
    canonical: canonicalUrl(page) ?? null,
    language: language(page, openGraph) ?? null,
    json_ld: jsonLd(page.root),
    microdata: microdata(page.root, page.base),
    open_graph: openGraph,
    twitter: metaGroup(page, ['twitter:'], 'twitter:'),
    headings: headings(page),
    links: pageLinks(page),
  };
}
