/**
 * Links of an HTML page: `href` of `<a>` and `<area>`, resolved against `<base href>` when the page has
 * one. At most `limit` links per page, so one huge page cannot take a worker's memory. The page is
 * parsed as the outputs parse it (engine parsePage: the pre-scan first, under the process's parse caps,
 * which a crawl page has passed before it was billed), so no page makes the parse quadratic.
 */
import { parsePage } from '../../engine';

export const MAX_LINKS_PER_PAGE = 5_000;

export interface PageLinks {
  /** The URL relative links resolve against. */
  base: string;
  hrefs: string[];
}

export function extractLinks(html: string, pageUrl: string, limit = MAX_LINKS_PER_PAGE): PageLinks {
  const root = parsePage(html);
  let base = pageUrl;
  const baseHref = root.querySelector('base[href]')?.getAttribute('href');
  if (baseHref) {
    try {
      base = new URL(baseHref, pageUrl).href;
    } catch {
      // an unusable <base> is ignored, as browsers do
    }
  }
  const hrefs: string[] = [];
  for (const element of root.querySelectorAll('a[href], area[href]')) {
    const href = element.getAttribute('href');
    if (href === undefined || href === '' || href.startsWith('#')) continue;
    if (/^\s*(javascript|mailto|tel|data):/i.test(href)) continue;
    hrefs.push(href);
    if (hrefs.length >= limit) break;
  }
  return { base, hrefs };
}
