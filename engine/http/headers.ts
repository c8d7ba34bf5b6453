/**
 * Request headers for plain fetches: what a current desktop Chrome sends on a top-level navigation,
 * with the caller's forwarded headers on top. Headers that belong to one connection or to a proxy are
 * never forwarded, and Accept-Encoding stays ours because the engine must be able to decode the answer.
 */
const CHROME_MAJOR = '141';

export const DEFAULT_USER_AGENT = `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${CHROME_MAJOR}.0.0.0 Safari/537.36`;

export const ACCEPT_ENCODING = 'gzip, deflate, br';

const DEFAULT_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['sec-ch-ua', `"Google Chrome";v="${CHROME_MAJOR}", "Not?A_Brand";v="8", "Chromium";v="${CHROME_MAJOR}"`],
  ['sec-ch-ua-mobile', '?0'],
  ['sec-ch-ua-platform', '"Windows"'],
  ['upgrade-insecure-requests', '1'],
  ['user-agent', DEFAULT_USER_AGENT],
  [
    'accept',
    'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7',
  ],
  ['sec-fetch-site', 'none'],
  ['sec-fetch-mode', 'navigate'],
  ['sec-fetch-user', '?1'],
  ['sec-fetch-dest', 'document'],
  ['accept-encoding', ACCEPT_ENCODING],
  ['accept-language', 'en-US,en;q=0.9'],
];

/** Never forwarded: per-connection (RFC 9110 §7.6.1), framing, proxy credentials, and ours. */
const DROPPED = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
  'expect',
  'accept-encoding',
  'http2-settings',
]);

/** Dropped when a redirect leaves the origin, as browsers do: credentials for one site only. */
const ORIGIN_BOUND = new Set(['authorization', 'cookie']);

/** Dropped when a redirect turns the request into a GET without a body. */
const BODY_HEADERS = new Set(['content-type', 'content-encoding', 'content-language', 'content-location']);

export type HeaderList = Array<[string, string]>;

const validName = (name: string): boolean => /^[!#$%&'*+.^`|~\w-]+$/.test(name);
const validValue = (value: string): boolean => !/[\r\n\0]/.test(value);

/** The defaults with `forwarded` on top: a forwarded name replaces every default of that name. */
export function buildRequestHeaders(forwarded: ReadonlyArray<readonly [string, string]> = []): HeaderList {
  const kept: HeaderList = [];
  for (const [rawName, value] of forwarded) {
    const name = rawName.trim().toLowerCase();
    if (DROPPED.has(name) || !validName(name) || !validValue(value)) continue;
    kept.push([name, value]);
  }
  const replaced = new Set(kept.map(([name]) => name));
  return [...DEFAULT_HEADERS.filter(([name]) => !replaced.has(name)).map(([name, value]): [string, string] => [name, value]), ...kept];
}

export function withoutHeaders(headers: HeaderList, options: { crossOrigin: boolean; dropBody: boolean }): HeaderList {
  return headers.filter(
    ([name]) => !(options.crossOrigin && ORIGIN_BOUND.has(name)) && !(options.dropBody && BODY_HEADERS.has(name)),
  );
}

/** Flattens undici's parsed response headers into pairs, one per value. */
export function headerPairs(headers: Record<string, string | string[] | undefined>): HeaderList {
  const pairs: HeaderList = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) pairs.push([name, item]);
  }
  return pairs;
}

export const headerValue = (headers: HeaderList, name: string): string | undefined =>
  headers.find(([candidate]) => candidate === name)?.[1];
