/**
 * Page kinds from URLs alone, before any page is compared: URLs of the domain grouped by the shape of
 * their path (how many segments, the first one, the query keys). A group with enough URLs is a kind
 * worth preparing; its name comes from the constant part of the path. Sampling is deterministic: URLs
 * are ordered by a hash of the domain, the kind, the attempt and the URL.
 */
import { createHash } from 'node:crypto';
import { getDomain } from 'tldts';
import { fieldName } from './signals';

import type { Kind } from '../../core/extract/preparation';

export type { Kind };

const MIN_KIND_URLS = 5;
const ASSET = /\.(?:jpe?g|png|gif|webp|svg|ico|css|js|mjs|json|xml|txt|pdf|zip|gz|mp4|mp3|woff2?)$/i;

function shapeOf(url: URL): { key: string; first: string; depth: number } {
  const segments = url.pathname.split('/').filter(Boolean);
  const keys = [...new Set([...url.searchParams.keys()].filter((key) => !/^utm_|^(gclid|fbclid)$/.test(key)))].sort();
  const first = segments[0] ?? '';
  return { key: `${segments.length}|${segments.length > 1 ? first : ''}|${keys.join(',')}`, first, depth: segments.length };
}

/** URLs of the domain that may be pages (same registrable domain, http(s), not an asset), normalised. */
export function pageUrls(domain: string, candidates: Iterable<string>): string[] {
  const seen = new Set<string>();
  for (const candidate of candidates) {
    let url: URL;
    try {
      url = new URL(candidate);
    } catch {
      continue;
    }
    if (!/^https?:$/.test(url.protocol) || getDomain(url.hostname) !== domain || ASSET.test(url.pathname)) continue;
    url.hash = '';
    for (const key of [...url.searchParams.keys()]) if (/^utm_|^(gclid|fbclid)$/.test(key)) url.searchParams.delete(key);
    seen.add(url.href);
  }
  return [...seen].sort();
}

/** Kinds of page among `urls`: groups of the same path shape with enough members; the home page is none. */
export function groupKinds(urls: readonly string[], minUrls = MIN_KIND_URLS): Kind[] {
  const groups = new Map<string, { first: string; depth: number; query: boolean; urls: string[] }>();
  for (const href of urls) {
    const url = new URL(href);
    const shape = shapeOf(url);
    if (shape.depth === 0 && url.search === '') continue;
    const group = groups.get(shape.key) ?? { first: shape.first, depth: shape.depth, query: url.search !== '', urls: [] };
    group.urls.push(href);
    groups.set(shape.key, group);
  }
  const kinds: Kind[] = [];
  const taken = new Set<string>();
  for (const group of [...groups.values()].sort((a, b) => b.urls.length - a.urls.length || a.first.localeCompare(b.first))) {
    if (group.urls.length < minUrls) continue;
    const base = fieldName(group.first) || 'page';
    let role = `${base}_${group.depth > 1 ? 'detail' : group.query ? 'list' : 'page'}`;
    for (let suffix = 2; taken.has(role); suffix++) role = `${base}_${suffix}`;
    taken.add(role);
    kinds.push({ role, urls: group.urls });
  }
  return kinds;
}

/** Whether `url` has the same path shape as `example` (a sibling page of the same kind). */
export const sameShape = (example: string, url: string): boolean => shapeOf(new URL(example)).key === shapeOf(new URL(url)).key;

/** The kind an example URL stands for. */
export function exampleRole(example: string, taken: ReadonlySet<string>): string {
  const url = new URL(example);
  const { first, depth } = shapeOf(url);
  const base = fieldName(first) || 'page';
  let role = `${base}_${depth > 1 ? 'detail' : url.search ? 'list' : 'page'}`;
  for (let suffix = 2; taken.has(role); suffix++) role = `${base}_${suffix}`;
  return role;
}

/** `urls` in the deterministic order of one attempt. */
export function sampleOrder(urls: readonly string[], seed: string): string[] {
  const rank = (url: string) => createHash('sha256').update(`${seed}|${url}`).digest('hex');
  return [...urls].sort((a, b) => (rank(a) < rank(b) ? -1 : rank(a) > rank(b) ? 1 : 0));
}

/** `Sitemap:` lines of a robots.txt. */
export const robotsSitemaps = (robots: string): string[] =>
  robots
    .split(/\r?\n/)
    .map((line) => /^\s*sitemap\s*:\s*(\S+)/i.exec(line)?.[1])
    .filter((value): value is string => value !== undefined);

/** `<loc>` entries of a sitemap or sitemap index. */
export const sitemapLocations = (xml: string): string[] =>
  [...xml.matchAll(/<loc>\s*([^<\s]+)\s*<\/loc>/gi)].map((match) => match[1]!.replace(/&amp;/g, '&'));

/** Links of a page (`a[href]`), absolute. */
export function pageLinks(html: string, base: string): string[] {
  const links: string[] = [];
  for (const match of html.matchAll(/<a\b[^>]*\bhref\s*=\s*("([^"]*)"|'([^']*)'|([^\s>]+))/gi)) {
    const href = (match[2] ?? match[3] ?? match[4] ?? '').replace(/&amp;/g, '&');
    try {
      links.push(new URL(href, base).href);
    } catch {
      // not a URL
    }
  }
  return links;
}

export { getDomain as registrableDomainOf };
