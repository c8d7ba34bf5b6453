/**
 * robots.txt as RFC 9309 reads it, pure: groups of `user-agent` lines and their `allow`/`disallow`
 * rules, the group that names our product token (groups naming it more than once are merged; `*` when
 * none does), the longest matching rule deciding (`allow` on a tie), `*` matching any characters and a
 * final `$` anchoring the end. `Crawl-delay` (not in the RFC, but widely published) is read from the
 * chosen group; `Sitemap` lines belong to no group.
 */

import { compilePattern, matchesPattern, type MatchBudget, type PathPattern } from './glob';

/** The RFC's lower bound on what a crawler must parse; anything after it is ignored. */
export const ROBOTS_MAX_BYTES = 500 * 1024;
/**
 * Rules kept for the group that applies to us (groups naming us twice count together); later ones are
 * ignored. Every URL checked is matched against each rule, so this bounds the work of one check.
 */
export const ROBOTS_MAX_RULES = 2_000;
/** Characters of a rule's path pattern; a longer rule is ignored (it is longer than any URL we fetch). */
export const ROBOTS_MAX_RULE_LENGTH = 2_048;
/**
 * Characters of the path one check may look at across all the rules (a rule with wildcards looks at
 * up to the whole path; a plain prefix rule or `/*.pdf$` at its own length only). Ordinary files stay
 * far below it (240 wildcard rules against the longest URL a Fetch takes); a file built to cost more
 * for a URL is taken as disallowing it (`too_costly`), which bounds a check to a few milliseconds.
 */
export const ROBOTS_MAX_MATCH_WORK = 500_000;

interface Rule {
  allow: boolean;
  /** The path pattern, percent-encoding normalised: its length decides between matching rules. */
  pattern: string;
  compiled: PathPattern;
}

interface Group {
  agents: string[];
  rules: Rule[];
  crawlDelaySeconds?: number;
}

/** `too_costly`: the file is built so that telling would cost more than ROBOTS_MAX_MATCH_WORK; taken as disallowed. */
export type RobotsDecision = 'allowed' | 'disallowed' | 'too_costly';

export interface RobotsRules {
  /** Whether `url` (absolute, or a path with its query) may be fetched. */
  allows(url: string): boolean;
  /** The same, saying why not. */
  decide(url: string): RobotsDecision;
  /** `Crawl-delay` of the group that applies, in milliseconds. */
  crawlDelayMs?: number;
  sitemaps: string[];
}

/** Uppercase percent escapes, percent-encode what is not ASCII, so `%7e`, `%7E` and `~` compare alike. */
function normalisePath(path: string): string {
  let out = '';
  for (const char of path) {
    if (char.charCodeAt(0) > 0x7e || char.charCodeAt(0) < 0x21) out += encodeURIComponent(char);
    else out += char;
  }
  return out.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => {
    const code = parseInt(hex, 16);
    // Unreserved characters are the same escaped or not (RFC 3986 2.3).
    return /[A-Za-z0-9\-._~]/.test(String.fromCharCode(code)) ? String.fromCharCode(code) : `%${hex.toUpperCase()}`;
  });
}

function ruleOf(allow: boolean, raw: string): Rule | undefined {
  const pattern = normalisePath(raw.trim());
  // `Disallow:` with no path disallows nothing.
  if (pattern === '' || pattern.length > ROBOTS_MAX_RULE_LENGTH) return undefined;
  return { allow, pattern, compiled: compilePattern(pattern) };
}

/** `key: value` of a line without its comment, or undefined; read by hand, as a pattern over a long line could backtrack. */
function fieldOf(rawLine: string): { key: string; value: string } | undefined {
  const hash = rawLine.indexOf('#');
  const line = hash < 0 ? rawLine : rawLine.slice(0, hash);
  const colon = line.indexOf(':');
  if (colon < 0) return undefined;
  const key = line.slice(0, colon).trim();
  if (key === '' || !isFieldName(key)) return undefined;
  return { key: key.toLowerCase(), value: line.slice(colon + 1).trim() };
}

function isFieldName(key: string): boolean {
  for (let index = 0; index < key.length; index++) {
    const code = key.charCodeAt(index) | 0x20;
    if (!(code >= 0x61 && code <= 0x7a) && key[index] !== '-') return false;
  }
  return true;
}

/** Our product token as the RFC wants it: letters, `_` and `-` only, compared case-insensitively. */
export function productToken(userAgent: string): string {
  return (/^[A-Za-z_-]+/.exec(userAgent.trim())?.[0] ?? userAgent.trim()).toLowerCase();
}

export function parseRobots(text: string, userAgent: string): RobotsRules {
  const token = productToken(userAgent);
  const groups: Group[] = [];
  const sitemaps: string[] = [];
  let current: Group | undefined;
  let lastWasAgent = false;
  for (const rawLine of text.slice(0, ROBOTS_MAX_BYTES).split(/\r\n|\r|\n/)) {
    const field = fieldOf(rawLine);
    if (!field) continue;
    const { key, value } = field;
    if (key === 'user-agent') {
      if (!current || !lastWasAgent) {
        current = { agents: [], rules: [] };
        groups.push(current);
      }
      current.agents.push(value.toLowerCase());
      lastWasAgent = true;
      continue;
    }
    if (key === 'sitemap') {
      if (value) sitemaps.push(value);
      continue;
    }
    lastWasAgent = false;
    if (!current) continue;
    if (key === 'allow' || key === 'disallow') {
      const rule = ruleOf(key === 'allow', value);
      if (rule) current.rules.push(rule);
    } else if (key === 'crawl-delay') {
      const seconds = Number(value);
      if (Number.isFinite(seconds) && seconds >= 0) current.crawlDelaySeconds = seconds;
    }
  }
  const named = groups.filter((group) => group.agents.some((agent) => agent !== '*' && productToken(agent) === token));
  const chosen = named.length > 0 ? named : groups.filter((group) => group.agents.includes('*'));
  const rules = chosen.flatMap((group) => group.rules).slice(0, ROBOTS_MAX_RULES);
  const delays = chosen.flatMap((group) => (group.crawlDelaySeconds !== undefined ? [group.crawlDelaySeconds] : []));
  const decide = (url: string): RobotsDecision => {
    const path = pathOf(url);
    // The RFC: /robots.txt itself is always allowed.
    if (path === '/robots.txt') return 'allowed';
    const budget: MatchBudget = { left: ROBOTS_MAX_MATCH_WORK };
    let best: Rule | undefined;
    for (const rule of rules) {
      const matched = matchesPattern(rule.compiled, path, budget);
      if (matched === undefined) return 'too_costly';
      if (!matched) continue;
      if (!best || rule.pattern.length > best.pattern.length || (rule.pattern.length === best.pattern.length && rule.allow && !best.allow)) best = rule;
    }
    return best?.allow === false ? 'disallowed' : 'allowed';
  };
  return {
    allows: (url) => decide(url) === 'allowed',
    decide,
    ...(delays.length > 0 ? { crawlDelayMs: Math.round(Math.max(...delays) * 1000) } : {}),
    sitemaps,
  };
}

/** Path and query of a URL (or of a path), normalised like the rules. */
function pathOf(url: string): string {
  if (url.startsWith('/')) return normalisePath(url);
  try {
    const parsed = new URL(url);
    return normalisePath(`${parsed.pathname}${parsed.search}`);
  } catch {
    return normalisePath(url);
  }
}

/** Everything allowed (robots.txt absent: a 4xx) or everything disallowed (5xx, unreachable). */
export const ALLOW_ALL: RobotsRules = { allows: () => true, decide: () => 'allowed', sitemaps: [] };
export const DISALLOW_ALL: RobotsRules = {
  allows: (url) => pathOf(url) === '/robots.txt',
  decide: (url) => (pathOf(url) === '/robots.txt' ? 'allowed' : 'disallowed'),
  sitemaps: [],
};
