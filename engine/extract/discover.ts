/**
 * What discovery reads from URLs alone: the shape of a URL's path (how many segments, the first one
 * when there are several, the query keys but those that page through a list), which page URLs are worth a look, the sitemaps a domain
 * publishes, and a deterministic order for sampling (a hash of the domain, the kind, the attempt and
 * the URL). Page kinds themselves also need the pages' structure: see kinds.ts.
 */
import { createHash } from 'node:crypto';
import { registrableDomain } from '../safety/domain';

const ASSET = /\.(?:jpe?g|png|gif|webp|svg|ico|css|js|mjs|json|xml|txt|pdf|zip|gz|mp4|mp3|woff2?)$/i;
const TRACKING = /^utm_|^(gclid|fbclid)$/;
/** Query keys that page through one list (`?q=x` and `?q=x&page=2` are pages of one kind). */
const PAGING = /^(page|p|pg|paged|pagenum|page_?number|offset|start|from|skip)$/i;

export interface UrlShape {
  /** URLs with the same key have the same shape. */
  key: string;
  /** The first path segment, and whether every URL of the shape shares it. */
  first: string;
  depth: number;
  query: boolean;
}

export function shapeOf(href: string): UrlShape {
  const url = new URL(href);
  const segments = url.pathname.split('/').filter(Boolean);
  const all = [...new Set([...url.searchParams.keys()].filter((key) => !TRACKING.test(key)))];
  const keys = all.filter((key) => !PAGING.test(key)).sort();
  const first = segments[0] ?? '';
  // Paging keys only mark the URL as a query's: `?q=x` and `?q=x&page=2` have one shape, `/about` another than `/search?page=2`.
  const paged = keys.length === 0 && all.length > 0 ? '?' : '';
  return { key: `${segments.length}|${segments.length > 1 ? first : ''}|${keys.join(',')}${paged}`, first, depth: segments.length, query: all.length > 0 };
}

/** Whether a URL may be a page (http(s), not an asset such as an image or a feed). */
export const looksLikePage = (href: string): boolean => /^https?:/i.test(href) && !ASSET.test(new URL(href).pathname);

/** `urls` in the deterministic order of one attempt. */
export function sampleOrder(urls: readonly string[], seed: string): string[] {
  const rank = (url: string) => createHash('sha256').update(`${seed}|${url}`).digest('hex');
  return [...urls].sort((a, b) => (rank(a) < rank(b) ? -1 : rank(a) > rank(b) ? 1 : 0));
}

/**
 * Up to `limit` of `urls`, taking one URL of each shape in turn: a bounded crawl that follows fifty
 * links of one kind learns nothing the fifth did not, so every kind of link gets its turn first.
 */
export function shapeBalanced(urls: readonly string[], limit: number, seed: string): string[] {
  const byShape = new Map<string, string[]>();
  for (const url of sampleOrder(urls, seed)) {
    const key = shapeOf(url).key;
    byShape.set(key, [...(byShape.get(key) ?? []), url]);
  }
  const queues = [...byShape.keys()].sort().map((key) => byShape.get(key)!);
  const out: string[] = [];
  for (let round = 0; out.length < limit && queues.some((queue) => queue.length > round); round++) {
    for (const queue of queues) {
      const url = queue[round];
      if (url !== undefined && out.length < limit) out.push(url);
    }
  }
  return out;
}

/** `<loc>` entries of a sitemap or sitemap index. */
export const sitemapLocations = (xml: string): string[] =>
  [...xml.matchAll(/<loc>\s*([^<\s]+)\s*<\/loc>/gi)].map((match) => match[1]!.replace(/&amp;/g, '&'));

/** Recipes and prepared-domain records are keyed by the service's one registrable-domain rule. */
export { registrableDomain as registrableDomainOf };
