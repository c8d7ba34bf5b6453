/**
 * An account's terms on the machine's browser, applied by the Fetch pipeline to every render it asks
 * for (the Fetch route, MCP, Batch tasks, crawl pages):
 *
 * - Its share of the browser's pages: the plan's `render_pages` (plans.ts: unset, half of
 *   BROWSER_MAX_PAGES), handed to the engine with each render. The browser host's pool holds it
 *   (engine/browser/slots.ts), so it holds for every process rendering on the machine.
 * - Its deadline renders. A render that held its page for at least half of RENDER_TIMEOUT_MS and
 *   ended at the deadline spent the machine's time, yet failed requests are never charged (the
 *   interface's cost model). So it is counted instead: per account and DEADLINE_RENDER_WINDOW_MS
 *   window, for the whole service (window-counts.ts, collection `deadline_renders`). Once
 *   the window holds the plan's `deadline_renders`, the account's renders are refused until it ends:
 *   429 `rate_limited` naming `deadline_renders`, with `Retry-After`. Its plain fetches go on.
 *
 * The check is one read by `_id` per render (the record at the limit); a refusal is remembered in the
 * process until its window ends, and a plan is read once per account per PLAN_MEMORY_MS.
 */
import type { Db } from 'mongodb';
import { problem, secondsText, type ApiError } from '../../base/errors';
import type { Logger } from '../../base/log';
import type { Config } from '../../base/config';
import type { RetrievalError } from '../../engine';
import type { Accounts } from '../accounts';
import { LIMIT_NAMES } from '../accounts/limits';
import { createWindowCounts, limitsMemory, remember } from './window-counts';

export interface RenderRules {
  /** Browser pages the account's renders may hold at once. */
  pagesOf(account: string): Promise<number>;
  /** The refusal of the account's next render (429 naming `deadline_renders`), or undefined: it may render. */
  refusal(account: string): Promise<ApiError | undefined>;
  /** A render of the account failed: counted when it ran to its deadline on its page. */
  failed(account: string, error: RetrievalError): Promise<void>;
}

export function createRenderRules(deps: {
  db: Db;
  accounts: Pick<Accounts, 'store' | 'plans'>;
  config: Pick<Config, 'renderTimeoutMs' | 'deadlineRenderWindowMs'>;
  log?: Logger;
  now?: () => number;
}): RenderRules {
  const counts = createWindowCounts(deps.db, 'deadline_renders', deps.config.deadlineRenderWindowMs);
  const now = deps.now ?? Date.now;
  const windowMs = counts.windowMs;
  const limitsOf = limitsMemory(deps.accounts, now);
  /** Accounts refused until the end of their window (epoch ms). */
  const refused = new Map<string, number>();

  function throttled(allowed: number, retryAfterSeconds: number): ApiError {
    return problem(
      'rate_limited',
      `This account's renders ran to the render deadline ${allowed} times in ${Math.round(windowMs / 60_000)} minutes, what its plan allows (limit ${LIMIT_NAMES.deadlineRenders}); renders are refused for ${secondsText(retryAfterSeconds)} more. Requests without js_render still run.`,
      { members: { limit: LIMIT_NAMES.deadlineRenders, allowed }, headers: { 'Retry-After': String(retryAfterSeconds) } },
    );
  }

  return {
    async pagesOf(account) {
      return (await limitsOf(account)).renderPages;
    },

    async refusal(account) {
      const at = now();
      const { window, retryAfterSeconds } = counts.windowOf(at);
      const { deadlineRenders } = await limitsOf(account);
      const until = refused.get(account);
      if (until !== undefined && until > at) return throttled(deadlineRenders, retryAfterSeconds);
      if (!(await counts.full(account, deadlineRenders, at))) return undefined;
      remember(refused, account, (window + 1) * windowMs);
      return throttled(deadlineRenders, retryAfterSeconds);
    },

    async failed(account, error) {
      if (error.kind !== 'timeout' || error.heldPageMs === undefined || error.heldPageMs < deps.config.renderTimeoutMs / 2) return;
      try {
        const { deadlineRenders } = await limitsOf(account);
        await counts.count(account, deadlineRenders, now());
      } catch (error) {
        // The answer (a 504) stands; only the count is missed.
        deps.log?.warn('a render that ran to its deadline could not be counted', { account, error: (error as Error).message });
      }
    },
  };
}
