/**
 * Cross-site writes to routes that need no key (agent signup, the OAuth consent form): a browser on
 * another site can post a "simple" form or text/plain body there, and the account it creates or the
 * approval it gives would be the visitor's doing. Such requests are told apart by what browsers send:
 * `Sec-Fetch-Site` (`cross-site` or `same-site` is refused; `same-origin` and `none`, typed or
 * bookmarked, pass) and, from browsers without it, `Origin` (refused unless it is one of the service's
 * own origins or the one the request was sent to: a page on another site cannot forge either header).
 * Agents and other non-browser clients send neither and pass.
 */
import type { HttpContext } from './context';

const originOf = (url: string): string | undefined => {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
};

/** Why the request is a cross-site write, or undefined when it is not one. */
export function crossSiteWrite(ctx: HttpContext, ownUrls: string[]): string | undefined {
  const site = ctx.get('Sec-Fetch-Site').trim().toLowerCase();
  if (site === 'cross-site' || site === 'same-site') return `Sec-Fetch-Site: ${site}`;
  const origin = ctx.get('Origin').trim();
  if (origin === '' || site === 'same-origin') return undefined;
  const host = ctx.get('Host').trim();
  const own = new Set([...ownUrls, ...(host ? [`http://${host}`, `https://${host}`] : [])].map(originOf).filter((value): value is string => value !== undefined));
  // `null` is what a sandboxed frame or a redirected form sends: never one of ours.
  return own.has(originOf(origin) ?? 'null') ? undefined : `Origin: ${origin.slice(0, 100)}`;
}
