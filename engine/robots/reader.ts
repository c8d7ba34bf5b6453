/**
 * robots.txt per origin, fetched once and kept: a 2xx is parsed and kept for `cacheMs` (the RFC bounds
 * it at 24 hours); a 4xx means there is none (everything allowed) and is kept as long; a 5xx, a 429 or
 * no answer at all means the site may be in trouble: everything is disallowed for `errorMs`, then it
 * is asked again (a copy read earlier, if any, is used meanwhile). One fetch per origin at a time.
 */
import { ALLOW_ALL, DISALLOW_ALL, parseRobots, type RobotsRules } from './parse';

export type RobotsAnswer = { ok: true; status: number; body: string } | { ok: false; detail: string };

export interface RobotsReaderOptions {
  /** Fetches a robots.txt (redirects followed); never throws. */
  fetchText(url: string, signal?: AbortSignal): Promise<RobotsAnswer>;
  userAgent: string;
  /** How long a read robots.txt (or its absence) is trusted; at most 24 hours. */
  cacheMs: number;
  /** How long an unreachable robots.txt disallows everything before it is asked again. */
  errorMs: number;
  now?: () => number;
  /** Origins kept at most (the oldest are forgotten first). */
  maxOrigins?: number;
}

export interface RobotsVerdict {
  allowed: boolean;
  /** Why not, in words, when not allowed. */
  reason?: string;
  /** The origin's `Crawl-delay` for us, in milliseconds. */
  crawlDelayMs?: number;
}

interface Entry {
  rules: RobotsRules;
  /** What kind of answer the rules came from (for the reason of a refusal). */
  source: 'file' | 'absent' | 'unreachable';
  expiresAt: number;
  /** The last copy read from the file, used while the origin is unreachable. */
  lastGood?: RobotsRules;
}

const DAY_MS = 24 * 60 * 60 * 1000;

export class RobotsReader {
  private readonly entries = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<Entry>>();
  private readonly now: () => number;
  private readonly cacheMs: number;

  constructor(private readonly options: RobotsReaderOptions) {
    this.now = options.now ?? Date.now;
    this.cacheMs = Math.min(options.cacheMs, DAY_MS);
  }

  /** Whether our user agent may fetch `url`, by its origin's robots.txt. */
  async check(url: string, signal?: AbortSignal): Promise<RobotsVerdict> {
    const parsed = new URL(url);
    const entry = await this.entry(parsed.origin, signal);
    const decision = entry.rules.decide(url);
    const delay = entry.rules.crawlDelayMs !== undefined ? { crawlDelayMs: entry.rules.crawlDelayMs } : {};
    if (decision === 'allowed') return { allowed: true, ...delay };
    const reason =
      entry.source === 'unreachable'
        ? `robots.txt of ${parsed.origin} could not be read; nothing there is fetched for now`
        : decision === 'too_costly'
          ? `robots.txt of ${parsed.origin} has too many wildcard rules to evaluate for ${parsed.pathname}; taken as disallowing it`
          : `robots.txt of ${parsed.origin} disallows ${parsed.pathname}`;
    return { allowed: false, reason, ...delay };
  }

  /** The origin's rules (sitemaps, crawl delay), read if needed. */
  async rules(origin: string, signal?: AbortSignal): Promise<RobotsRules> {
    return (await this.entry(origin, signal)).rules;
  }

  private async entry(origin: string, signal?: AbortSignal): Promise<Entry> {
    const cached = this.entries.get(origin);
    if (cached && cached.expiresAt > this.now()) return cached;
    let loading = this.pending.get(origin);
    if (!loading) {
      loading = this.load(origin, cached, signal).finally(() => this.pending.delete(origin));
      this.pending.set(origin, loading);
    }
    return loading;
  }

  private async load(origin: string, previous: Entry | undefined, signal?: AbortSignal): Promise<Entry> {
    const answer = await this.options.fetchText(`${origin}/robots.txt`, signal);
    const now = this.now();
    let entry: Entry;
    if (answer.ok && answer.status >= 200 && answer.status < 300) {
      const rules = parseRobots(answer.body, this.options.userAgent);
      entry = { rules, source: 'file', expiresAt: now + this.cacheMs, lastGood: rules };
    } else if (answer.ok && answer.status >= 400 && answer.status < 500 && answer.status !== 429) {
      entry = { rules: ALLOW_ALL, source: 'absent', expiresAt: now + this.cacheMs };
    } else {
      const lastGood = previous?.lastGood;
      entry = lastGood
        ? { rules: lastGood, source: 'file', expiresAt: now + this.options.errorMs, lastGood }
        : { rules: DISALLOW_ALL, source: 'unreachable', expiresAt: now + this.options.errorMs };
    }
    // A caller's cancellation is not the origin's answer: not kept.
    if (signal?.aborted) return entry;
    this.entries.delete(origin);
    this.entries.set(origin, entry);
    const max = this.options.maxOrigins ?? 10_000;
    while (this.entries.size > max) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
    return entry;
  }
}
