/**
 * The next hop after a redirect, as browsers compute it (Fetch standard, "HTTP-redirect fetch"):
 * 303 turns everything into GET, 301/302 turn POST into GET, 307/308 keep method and body; a body
 * dropped takes its Content-* headers along; credentials stay with their origin.
 */
import { withoutHeaders, type HeaderList } from './headers';

export const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

export interface Hop {
  url: URL;
  method: string;
  headers: HeaderList;
  body?: Buffer;
}

export type NextHop = { ok: true; hop: Hop } | { ok: false; detail: string };

/** `undefined` when the response is final (not a redirect status, or no Location). */
export function nextHop(current: Hop, status: number, location: string | undefined): NextHop | undefined {
  if (!REDIRECT_STATUSES.has(status) || location === undefined || location.trim() === '') return undefined;
  let url: URL;
  try {
    url = new URL(location.trim(), current.url);
  } catch {
    return { ok: false, detail: 'the target redirected to an invalid URL' };
  }
  if (url.hash === '' && current.url.hash !== '') url.hash = current.url.hash;
  const toGet = status === 303 || ((status === 301 || status === 302) && current.method === 'POST');
  const method = toGet ? 'GET' : current.method;
  const body = toGet ? undefined : current.body;
  const headers = withoutHeaders(current.headers, { crossOrigin: url.origin !== current.url.origin, dropBody: toGet });
  return { ok: true, hop: { url, method, headers, ...(body ? { body } : {}) } };
}
