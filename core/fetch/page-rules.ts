/**
 * An account's allowance of pages refused at a parse cap, applied by the Fetch pipeline of the API
 * (the Fetch route and MCP, whose event loop every account shares).
 *
 * A page past the depth, node or size cap, or past an output thread's time or memory, is answered
 * RESP005 and never charged (the interface's cost model), yet its download and scan cost the API
 * milliseconds each: an account asking for such pages over and over slowed every other account's
 * requests for nothing. So each refusal is counted, per account and CAPPED_PAGE_WINDOW_MS window, for
 * the whole service (window-counts.ts, collection `capped_pages`). Once the window holds the plan's
 * `capped_pages`, the account's requests whose outputs parse the page are refused until it ends: 429
 * `rate_limited` naming `capped_pages`, with `Retry-After`. Its other requests go on. A refusal for
 * lack of an output thread (`busy`) is the service's, not the page's, and is not counted.
 *
 * An account with no capped page in this process's current window costs nothing to check (memory
 * only); one with some is checked by one read by `_id` per request (the record at the allowance), and
 * a full window is remembered until it ends. Another process learns of a full window with the next
 * capped page it counts there, so the service lets at most one more page per process through.
 */
import type { Db } from 'mongodb';
import { problem, secondsText, type ApiError } from '../../base/errors';
import type { Config } from '../../base/config';
import type { Logger } from '../../base/log';
import type { HtmlLimit } from '../../engine';
import type { Accounts } from '../accounts';
import { LIMIT_NAMES } from '../accounts/limits';
import { createWindowCounts, limitsMemory, remember } from './window-counts';

export interface PageRules {
  /** The refusal of the account's next request whose outputs parse the page (429 naming `capped_pages`), or undefined. */
  refusal(account: string): Promise<ApiError | undefined>;
  /** A page of the account was refused at `limit`: counted, unless the refusal was for lack of a thread. */
  refused(account: string, limit: HtmlLimit): Promise<void>;
}

export function createPageRules(deps: {
  db: Db;
  accounts: Pick<Accounts, 'store' | 'plans'>;
  config: Pick<Config, 'cappedPageWindowMs'>;
  log?: Logger;
  now?: () => number;
}): PageRules {
  const counts = createWindowCounts(deps.db, 'capped_pages', deps.config.cappedPageWindowMs);
  const now = deps.now ?? Date.now;
  const limitsOf = limitsMemory(deps.accounts, now);
  /** Accounts whose window is full: until when (epoch ms), and the allowance. */
  const full = new Map<string, { until: number; allowed: number }>();
  /** `<account>|<window>` of the windows in which this process counted a capped page of the account. */
  const counted = new Map<string, true>();

  function throttled(allowed: number, at: number): ApiError {
    const { retryAfterSeconds } = counts.windowOf(at);
    return problem(
      'rate_limited',
      `This account's pages were refused at a parse cap ${allowed} times in ${Math.round(counts.windowMs / 60_000)} minutes, what its plan allows (limit ${LIMIT_NAMES.cappedPages}); requests whose outputs parse the page are refused for ${secondsText(retryAfterSeconds)} more. Requests for the page as it is still run.`,
      { members: { limit: LIMIT_NAMES.cappedPages, allowed }, headers: { 'Retry-After': String(retryAfterSeconds) } },
    );
  }

  const windowEnd = (at: number): number => (counts.windowOf(at).window + 1) * counts.windowMs;

  return {
    async refusal(account) {
      const at = now();
      const known = full.get(account);
      if (known && known.until > at) return throttled(known.allowed, at);
      if (!counted.has(`${account}|${counts.windowOf(at).window}`)) return undefined;
      const { cappedPages } = await limitsOf(account);
      if (!(await counts.full(account, cappedPages, at))) return undefined;
      remember(full, account, { until: windowEnd(at), allowed: cappedPages });
      return throttled(cappedPages, at);
    },

    async refused(account, limit) {
      if (limit === 'busy') return;
      const at = now();
      try {
        const { cappedPages } = await limitsOf(account);
        remember(counted, `${account}|${counts.windowOf(at).window}`, true);
        if (await counts.count(account, cappedPages, at)) remember(full, account, { until: windowEnd(at), allowed: cappedPages });
      } catch (error) {
        // The answer (a RESP005) stands; only the count is missed.
        deps.log?.warn('a page refused at a parse cap could not be counted', { account, error: (error as Error).message });
      }
    },
  };
}
