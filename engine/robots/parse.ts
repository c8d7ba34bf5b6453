/**
 * robots.txt as RFC 9309 reads it, pure: groups of `user-agent` lines and their `allow`/`disallow`
 * rules, the group that names our product token (groups naming it more than once are merged; `*` when
 * none does), the longest matching rule deciding (`allow` on a tie), `*` matching any characters and a
 * final `$` anchoring the end. `Crawl-delay` (not in the RFC, but widely published) is read from the
 * chosen group; `Sitemap` lines belong to no group.
 */

/** The RFC's lower bound on what a crawler must parse; anything after it is ignored. */
export const ROBOTS_MAX_BYTES = 500 * 1024;

interface Rule {
  allow: boolean;
  /** The path pattern, percent-encoding normalised. */
  pattern: string;
  regex: RegExp;
}

interface Group {
  agents: string[];
  rules: Rule[];
  crawlDelaySeconds?: number;
}

export interface RobotsRules {
  /** Whether `url` (absolute, or a path with its query) may be fetched. */
  allows(url: string): boolean;
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
  if (pattern === '') return undefined;
  const anchored = pattern.endsWith('$');
  const body = anchored ? pattern.slice(0, -1) : pattern;
  const source = body
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return { allow, pattern, regex: new RegExp(`^${source}${anchored ? '$' : ''}`, 's') };
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
    const line = rawLine.replace(/#.*$/, '').trim();
    const match = /^([A-Za-z-]+)\s*:\s*(.*)$/.exec(line);
    if (!match) continue;
    const key = match[1]!.toLowerCase();
    const value = match[2]!.trim();
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
  const rules = chosen.flatMap((group) => group.rules);
  const delays = chosen.flatMap((group) => (group.crawlDelaySeconds !== undefined ? [group.crawlDelaySeconds] : []));
  return {
    allows(url: string): boolean {
      const path = pathOf(url);
      // The RFC: /robots.txt itself is always allowed.
      if (path === '/robots.txt') return true;
      let best: Rule | undefined;
      for (const rule of rules) {
        if (!rule.regex.test(path)) continue;
        if (!best || rule.pattern.length > best.pattern.length || (rule.pattern.length === best.pattern.length && rule.allow && !best.allow)) best = rule;
      }
      return best?.allow ?? true;
    },
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
export const ALLOW_ALL: RobotsRules = { allows: () => true, sitemaps: [] };
export const DISALLOW_ALL: RobotsRules = { allows: (url) => pathOf(url) === '/robots.txt', sitemaps: [] };
