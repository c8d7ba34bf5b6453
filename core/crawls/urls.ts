/**
 * URL normalization, scope and patterns of a crawl.
 *
 * Two links are the same URL when they differ only by scheme (`http`/`https`), a leading `www.`, a
 * trailing slash, tracking parameters (`utm_*`, `gclid`, `fbclid`) or a fragment. Each URL has a `key`
 * (what the seen-set compares) and a presented form that does not depend on which twin was met first:
 * the start URL's scheme everywhere, the start URL's choice of `www.` on its own host, no `www.` on
 * other hosts, no trailing slash but on the root. A page is fetched with the path it was first
 * linked with, though (see `Normalized`). A crawl stays on the registrable domain of its start URL (public-suffix
 * aware, private suffixes such as `github.io` included; subdomains included).
 */
import net from 'node:net';
import { registrableDomain } from '../../engine';

export const MAX_URL_LENGTH = 2048;

const TRACKING_PARAMETER = /^(utm_.*|gclid|fbclid)$/i;

/** The service's one registrable-domain rule (private suffixes count: `alice.github.io` is a domain). */
export { registrableDomain };

/** What normalization needs to know about the crawl. */
export interface UrlScope {
  domain: string;
  scheme: 'http:' | 'https:';
  /** The start URL's host without `www.`, and whether the start URL had it. */
  startBareHost: string;
  startWww: boolean;
}

export function scopeOf(startUrl: string): UrlScope {
  const url = new URL(startUrl);
  const host = url.hostname.toLowerCase();
  return {
    domain: registrableDomain(host) ?? host,
    scheme: url.protocol === 'https:' ? 'https:' : 'http:',
    startBareHost: stripWww(host),
    startWww: host.startsWith('www.'),
  };
}

const stripWww = (host: string): string => (host.startsWith('www.') && host.split('.').length > 2 ? host.slice(4) : host);

function withoutTracking(search: string): string {
  if (search.length <= 1) return '';
  const kept = search
    .slice(1)
    .split('&')
    .filter((pair) => {
      if (pair === '') return false;
      const name = pair.split('=', 1)[0] ?? '';
      let decoded = name;
      try {
        decoded = decodeURIComponent(name.replace(/\+/g, ' '));
      } catch {
        // keep the raw name
      }
      return !TRACKING_PARAMETER.test(decoded);
    });
  return kept.length > 0 ? `?${kept.join('&')}` : '';
}

/**
 * `key`: what dedupe compares; `url`: the presented form; `fetch`: what is requested, the presented
 * form with the path as the page linked it (its trailing slash kept): a site whose paths end in `/`
 * may answer 404 without it. Scheme and host stay the presented ones (the start URL's scheme is the
 * one known to answer; a site that links `https:` may serve plain http only).
 */
export type Normalized = { ok: true; key: string; url: string; fetch: string } | { ok: false; reason: 'invalid' | 'scheme' | 'too_long' | 'out_of_scope' };

/**
 * Resolves `href` against `base` and normalizes it. Links longer than 2,048 characters, non-http(s)
 * links, links with credentials and links off the crawl's domain are refused.
 */
export function normalizeLink(href: string, base: URL | string, scope: UrlScope): Normalized {
  let url: URL;
  try {
    url = new URL(href.trim(), base);
  } catch {
    return { ok: false, reason: 'invalid' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, reason: 'scheme' };
  if (url.href.length > MAX_URL_LENGTH) return { ok: false, reason: 'too_long' };
  if (url.username || url.password) return { ok: false, reason: 'invalid' };
  const host = url.hostname.replace(/\.$/, '');
  if (host === '' || registrableDomain(host) !== scope.domain) return { ok: false, reason: 'out_of_scope' };
  const bare = stripWww(host);
  const port = url.port ? `:${url.port}` : '';
  const path = url.pathname.length > 1 && url.pathname.endsWith('/') ? url.pathname.replace(/\/+$/, '') || '/' : url.pathname || '/';
  const query = withoutTracking(url.search);
  const key = `${bare}${port}${path}${query}`;
  const shownHost = bare === scope.startBareHost && scope.startWww ? `www.${bare}` : bare;
  return { ok: true, key, url: `${scope.scheme}//${shownHost}${port}${path}${query}`, fetch: `${scope.scheme}//${shownHost}${port}${url.pathname || '/'}${query}` };
}

/** The seen-set key of the start URL (so links back to it count as duplicates and it is never a result). */
export function startKey(startUrl: string): string {
  const scope = scopeOf(startUrl);
  const normalized = normalizeLink(startUrl, startUrl, scope);
  return normalized.ok ? normalized.key : startUrl;
}

/** Keep, and open, only URLs containing one of `include` (when given) and none of `exclude`. */
export function passesPatterns(url: string, include: readonly string[], exclude: readonly string[]): boolean {
  if (include.length > 0 && !include.some((pattern) => url.includes(pattern))) return false;
  return !exclude.some((pattern) => url.includes(pattern));
}

export type StartUrlVerdict = { ok: true; url: URL; domain: string } | { ok: false; reason: string };

/**
 * Checks a start URL's shape: http(s), at most 2,048 characters, a public-looking host name (not an
 * IP address, not a local or single-label name) with a registrable domain. Address checks of the name
 * (private addresses behind public names) are the caller's, with the fetch engine's guard.
 */
export function checkStartUrl(raw: string): StartUrlVerdict {
  if (raw.length > MAX_URL_LENGTH) return { ok: false, reason: `The start URL is longer than ${MAX_URL_LENGTH} characters.` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'The start URL is not a valid URL.' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, reason: 'The start URL must use http or https.' };
  if (url.username || url.password) return { ok: false, reason: 'The start URL must not carry credentials.' };
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (net.isIP(host) !== 0) return { ok: false, reason: 'The start URL host is an IP address; use a public host name.' };
  if (host === 'localhost' || /\.(localhost|local|internal|home\.arpa)$/.test(host) || !host.includes('.')) {
    return { ok: false, reason: `The start URL host ${host} is a private host name.` };
  }
  const domain = registrableDomain(host);
  if (!domain) return { ok: false, reason: `The start URL host ${host} has no registrable domain.` };
  return { ok: true, url, domain };
}

/**
 * The key of a URL as crawls compare URLs (scheme, a leading `www.`, a trailing slash, tracking
 * parameters and the fragment left out), for any absolute http(s) URL; undefined for anything else.
 * Change tracking keys its histories by it, so a page a crawl found and the same page fetched share one.
 */
export function urlKey(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  const host = url.hostname.replace(/\.$/, '');
  if (host === '') return undefined;
  const port = url.port ? `:${url.port}` : '';
  const path = url.pathname.length > 1 && url.pathname.endsWith('/') ? url.pathname.replace(/\/+$/, '') || '/' : url.pathname || '/';
  return `${stripWww(host)}${port}${path}${withoutTracking(url.search)}`;
}
