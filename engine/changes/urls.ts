/**
 * Link targets and image sources as compared: tracking and session parameters dropped, the values of
 * cache-busting parameters masked, and random runs in the path (fingerprinted file names, signed
 * paths) masked like page text. The scheme, host, the rest of the path, other parameters and the
 * fragment count: a link that now points elsewhere is a change.
 */
import * as charsModule from './chars';
import * as timestampsModule from './timestamps';
import * as tokensModule from './tokens';
import type { NoiseKind } from './types';
import type { KeyWriter } from './writer';
// Local bindings, taken once: the TypeScript runner compiles to CommonJS, where each call through an
// imported name reads a getter, and in the scanning loops that cost more than the scanning itself.
const { codeAt, isAlnum, isHex } = charsModule;
const { matchTimestamp } = timestampsModule;
const { classifyRun, HEX_MIN, runEnd } = tokensModule;

/** Dropped: whether they are there says nothing about the page. */
const TRACKING: ReadonlySet<string> = new Set([
  'gclid', 'fbclid', 'msclkid', 'dclid', 'yclid', 'gbraid', 'wbraid', 'mc_cid', 'mc_eid', '_ga', '_gl', 'igshid', 'ref_src',
  'sid', 'sessionid', 'session_id', 'jsessionid', 'phpsessid', 'aspsessionid', 'cfid', 'cftoken', 'oly_anon_id', 'oly_enc_id',
  '_hsenc', '_hsmi', 'mkt_tok', 'trk', 'spm', 'zanpid',
]);

/** Their values change per render or per deployment, not with what the link points at. */
const CACHE_BUSTERS: ReadonlySet<string> = new Set([
  'v', 'ver', 'version', '_', 't', 'ts', 'cb', 'cache', 'cachebust', 'cachebuster', 'cache_bust', 'bust', 'nocache', 'nc',
  'rand', 'random', 'rnd', 'timestamp', 'time', '_t', '_ts', '_dc', '__cb', 'rev', 'revision', 'build', 'hash', 'itok', 'ck',
]);

/** Per-visitor secrets in links (a logout link's token): masked, the parameter kept. */
const SECRETS: ReadonlySet<string> = new Set(['token', 'csrf', 'csrf_token', '_token', 'authenticity_token', 'xsrf', 'nonce', 'sig', 'signature', 'expires', 'state']);

function parameterName(raw: string): string {
  let name = raw;
  if (name.includes('%')) {
    try {
      name = decodeURIComponent(name);
    } catch {
      // an undecodable name is compared as written
    }
  }
  return name.toLowerCase();
}

/** Writes the compared form of a URL. */
export function writeUrl(url: string, out: KeyWriter): void {
  const hash = url.indexOf('#');
  const beforeHash = hash < 0 ? url : url.slice(0, hash);
  const question = beforeHash.indexOf('?');
  let path = question < 0 ? beforeHash : beforeHash.slice(0, question);
  // `;jsessionid=…` path parameters (servlet containers) are session ids too.
  const semicolon = path.indexOf(';');
  if (semicolon >= 0) {
    out.drop('tracking', path.slice(semicolon));
    path = path.slice(0, semicolon);
  }
  writeUrlPart(path, out);
  if (question >= 0) {
    let first = true;
    for (const pair of beforeHash.slice(question + 1).split('&')) {
      if (pair === '') continue;
      const equals = pair.indexOf('=');
      const rawName = equals < 0 ? pair : pair.slice(0, equals);
      const name = parameterName(rawName);
      if (TRACKING.has(name) || name.startsWith('utm_')) {
        out.drop('tracking', pair);
        continue;
      }
      out.text(first ? '?' : '&');
      first = false;
      if (equals < 0) {
        writeUrlPart(pair, out);
        continue;
      }
      out.text(pair.slice(0, equals + 1));
      const value = pair.slice(equals + 1);
      if (value === '') continue;
      if (CACHE_BUSTERS.has(name)) out.mask('cache_buster', value);
      else if (SECRETS.has(name)) out.mask('token', value);
      else writeUrlPart(value, out);
    }
  }
  if (hash >= 0) writeUrlPart(url.slice(hash), out);
}

/**
 * A build fingerprint in a file name (`logo.00796241.png`, `app-3f9a8c2b.js`): hex between a dot,
 * dash or underscore and the extension's dot, even when it happens to hold no letter.
 */
function fingerprinted(part: string, start: number, end: number): 'hex' | undefined {
  if (end - start < 8 || codeAt(part, end) !== 46) return undefined;
  const before = codeAt(part, start - 1);
  if (before !== 46 && before !== 45 && before !== 95) return undefined;
  for (let j = start; j < end; j++) if (!isHex(part.charCodeAt(j))) return undefined;
  return 'hex';
}

/** A path, value or fragment: dates, UUIDs, hex and random tokens masked, the rest as written. */
function writeUrlPart(part: string, out: KeyWriter): void {
  let from = 0;
  let i = 0;
  /** Inside a run (`-`/`_` joined) already judged as a whole: only its words are judged now. */
  let judgedUntil = -1;
  const mask = (end: number, kind: NoiseKind): void => {
    out.text(part.slice(from, i));
    out.mask(kind, part.slice(i, end));
    from = end;
    i = end;
  };
  while (i < part.length) {
    if (!isAlnum(part.charCodeAt(i)) || (i > 0 && isAlnum(part.charCodeAt(i - 1)))) {
      i++;
      continue;
    }
    const stamp = matchTimestamp(part, i);
    if (stamp > i) {
      mask(stamp, 'timestamp');
      continue;
    }
    if (i >= judgedUntil) {
      const end = runEnd(part, i, true);
      const kind = classifyRun(part, i, end) ?? fingerprinted(part, i, end);
      if (kind) {
        mask(end, kind);
        continue;
      }
      judgedUntil = end;
    }
    // A word of a longer run: `app-3f9a8c2b.js`, `img_0f3c9a7e11b2`.
    let word = i;
    while (word < part.length && isAlnum(part.charCodeAt(word))) word++;
    const kind = word - i >= HEX_MIN ? (classifyRun(part, i, word) ?? fingerprinted(part, i, word)) : undefined;
    if (kind) mask(word, kind);
    else i = word;
  }
  out.text(part.slice(from));
}
