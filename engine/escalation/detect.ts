/**
 * Is this response a block rather than the page? A pure function of status, headers and body, driven by
 * the tables below. A verdict also says what would likely get past the block (`needs`), so the ladder
 * can skip configurations that cannot help; an empty `needs` means "unknown: try the next one".
 */
import type { Capability } from './rungs';

export interface ResponseView {
  status: number;
  headers?: ReadonlyArray<readonly [string, string]> | Readonly<Record<string, string | string[] | undefined>>;
  /** The body as received (plain engine) … */
  body?: string | Buffer;
  /** … or the HTML after scripts (browser engine). */
  html?: string;
}

export type BlockVerdict = { blocked: false } | { blocked: true; reason: string; needs: readonly Capability[] };

/** Statuses that mean "refused", and what usually gets past them. */
const BLOCK_STATUSES: Readonly<Record<number, { reason: string; needs: readonly Capability[] }>> = {
  401: { reason: 'status 401', needs: [] },
  403: { reason: 'status 403', needs: ['residential_ip'] },
  407: { reason: 'status 407', needs: ['residential_ip'] },
  429: { reason: 'status 429 (rate limited)', needs: ['residential_ip'] },
  503: { reason: 'status 503', needs: [] },
  520: { reason: 'status 520', needs: [] },
  521: { reason: 'status 521', needs: [] },
  522: { reason: 'status 522', needs: [] },
  523: { reason: 'status 523', needs: [] },
  524: { reason: 'status 524', needs: [] },
  525: { reason: 'status 525', needs: [] },
  526: { reason: 'status 526', needs: [] },
  529: { reason: 'status 529', needs: [] },
  530: { reason: 'status 530', needs: [] },
};

interface Marker {
  reason: string;
  needs: readonly Capability[];
  /** Body pattern (checked on the first 256 KB). */
  body?: RegExp;
  /** Header name and value pattern. */
  header?: readonly [string, RegExp];
  /** Strong markers count on any status; weak ones only on a blocking status or a short page. */
  strong: boolean;
}

/** Challenge and block pages of common protections, and what gets past them. */
const MARKERS: readonly Marker[] = [
  { reason: 'Cloudflare challenge', needs: ['javascript'], header: ['cf-mitigated', /challenge/i], strong: true },
  { reason: 'Cloudflare challenge', needs: ['javascript'], body: /<title>\s*just a moment\.{3}\s*<\/title>/i, strong: true },
  { reason: 'Cloudflare challenge', needs: ['javascript'], body: /cf-browser-verification|window\._cf_chl_opt|\/cdn-cgi\/challenge-platform\/h\//i, strong: true },
  { reason: 'Cloudflare block', needs: ['residential_ip'], body: /<title>\s*attention required!? \| cloudflare\s*<\/title>/i, strong: true },
  { reason: 'browser check', needs: ['javascript'], body: /checking your browser before accessing|enable javascript and cookies to continue/i, strong: true },
  { reason: 'DataDome challenge', needs: ['javascript', 'residential_ip'], body: /geo\.captcha-delivery\.com|ct\.captcha-delivery\.com/i, strong: false },
  { reason: 'PerimeterX challenge', needs: ['javascript'], body: /px-captcha|_pxcaptcha|press (&amp;|&) hold/i, strong: false },
  { reason: 'Imperva challenge', needs: ['javascript'], body: /_incapsula_resource|incapsula incident id/i, strong: false },
  { reason: 'AWS WAF challenge', needs: ['javascript'], body: /awswaf|aws-waf-token|challenge\.js.*awswaf/i, strong: false },
  { reason: 'Akamai block', needs: ['residential_ip'], body: /<title>\s*access denied\s*<\/title>[\s\S]{0,2000}reference\s*#/i, strong: false },
  { reason: 'bot check', needs: ['javascript'], body: /<title>[^<]*(are you a robot|robot check|verify you are (a )?human|human verification|captcha)[^<]*<\/title>/i, strong: false },
];

/** A page shorter than this (bytes) is checked against weak markers whatever its status. */
const SHORT_PAGE = 20_000;
/** Visible text below this many characters, with scripts present, is a page that needs JavaScript. */
const SCRIPT_ONLY_TEXT = 64;
const SCANNED = 256 * 1024;
/** The bytes of a body detection reads: a caller that cuts a download short keeps at least these. */
export const DETECT_SCANNED_BYTES = SCANNED;

export function detectBlock(response: ResponseView): BlockVerdict {
  const headers = headerMap(response.headers);
  const raw = response.html ?? response.body ?? '';
  const body = (typeof raw === 'string' ? raw : raw.subarray(0, SCANNED).toString('latin1')).slice(0, SCANNED);
  const blockingStatus = BLOCK_STATUSES[response.status];
  for (const marker of MARKERS) {
    if (!marker.strong && !blockingStatus && body.length > SHORT_PAGE) continue;
    const hit = marker.header ? marker.header[1].test(headers.get(marker.header[0]) ?? '') : marker.body ? marker.body.test(body) : false;
    if (hit) return { blocked: true, reason: marker.reason, needs: marker.needs };
  }
  if (blockingStatus) return { blocked: true, reason: blockingStatus.reason, needs: blockingStatus.needs };
  if (response.status < 200 || response.status >= 300 || response.status === 204) return { blocked: false };
  const type = headers.get('content-type') ?? '';
  if (type !== '' && !/html/i.test(type)) return { blocked: false };
  if (body.trim() === '') return { blocked: true, reason: 'empty body', needs: ['javascript'] };
  if (/<script\b/i.test(body) && strippedText(body).length < SCRIPT_ONLY_TEXT) return { blocked: true, reason: 'page is scripts only', needs: ['javascript'] };
  return { blocked: false };
}

/** A page's words by regular expressions (no parse: detection runs on every answer): tags, scripts, styles, comments and entities removed. */
export function strippedText(html: string): string {
  return html
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<(script|style|noscript|template|svg)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&[#\w]+;/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

function headerMap(headers: ResponseView['headers']): Map<string, string> {
  const map = new Map<string, string>();
  if (!headers) return map;
  const pairs: Array<readonly [string, unknown]> = Array.isArray(headers) ? headers : Object.entries(headers);
  for (const [name, value] of pairs) {
    if (value === undefined) continue;
    const text = Array.isArray(value) ? value.join(', ') : String(value);
    const key = name.toLowerCase();
    map.set(key, map.has(key) ? `${map.get(key) ?? ''}, ${text}` : text);
  }
  return map;
}
