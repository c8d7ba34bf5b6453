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
 *   window, for the whole service, as insert-only records `deadline_renders/<account>|<window>|<n>` for
 *   the first free `n` (the unique `_id` keeps the count exact across processes, as for signups). Once
 *   the window holds the plan's `deadline_renders`, the account's renders are refused until it ends:
 *   429 `rate_limited` naming `deadline_renders`, with `Retry-After`. Its plain fetches go on.
 *
 * The check is one read by `_id` per render (the record at the limit); a refusal is remembered in the
 * process until its window ends, and a plan is read once per account per PLAN_MEMORY_MS.
 */
import type { Collection, Db } from 'mongodb';
import type { IndexRegistration } from '../../base/db';
import { isDuplicateKey } from '../../base/db';
import { problem, secondsText, type ApiError } from '../../base/errors';
import type { Logger } from '../../base/log';
import type { Config } from '../../base/config';
import type { RetrievalError } from '../../engine';
import type { Accounts } from '../accounts';
import { LIMIT_NAMES } from '../accounts/limits';

export const DEADLINE_RENDER_INDEXES: IndexRegistration = {
  deadline_renders: [{ key: { at: 1 }, name: 'at' }],
};

interface DeadlineRenderDoc {
  _id: string;
  account_id: string;
  window: number;
  at: Date;
}

export interface RenderRules {
  /** Browser pages the account's renders may hold at once. */
  pagesOf(account: string): Promise<number>;
  /** The refusal of the account's next render (429 naming `deadline_renders`), or undefined: it may render. */
  refusal(account: string): Promise<ApiError | undefined>;
  /** A render of the account failed: counted when it ran to its deadline on its page. */
  failed(account: string, error: RetrievalError): Promise<void>;
}

type Terms = { pages: number; deadlineRenders: number };

/** How long an account's plan is used before it is read again. */
const PLAN_MEMORY_MS = 30_000;
/** Accounts remembered at most (plans, refusals, next free places); past it, forgotten at once. */
const MAX_REMEMBERED = 10_000;

export function createRenderRules(deps: {
  db: Db;
  accounts: Pick<Accounts, 'store' | 'plans'>;
  config: Pick<Config, 'renderTimeoutMs' | 'deadlineRenderWindowMs'>;
  log?: Logger;
  now?: () => number;
}): RenderRules {
  const records: Collection<DeadlineRenderDoc> = deps.db.collection<DeadlineRenderDoc>('deadline_renders');
  const now = deps.now ?? Date.now;
  const windowMs = deps.config.deadlineRenderWindowMs;
  const plans = new Map<string, { terms: Terms; until: number }>();
  /** Accounts refused until the end of their window (epoch ms). */
  const refused = new Map<string, number>();
  /** `<account>|<window>` → the lowest place not known to be taken. */
  const nextPlace = new Map<string, number>();
  const remember = <V>(map: Map<string, V>, key: string, value: V): void => {
    if (map.size >= MAX_REMEMBERED && !map.has(key)) map.clear();
    map.set(key, value);
  };

  async function termsOf(account: string): Promise<Terms> {
    const at = now();
    const known = plans.get(account);
    if (known && known.until > at) return known.terms;
    const stored = await deps.accounts.store.account(account);
    // An account gone meanwhile renders what is in flight on the free plan's terms.
    const { limits } = deps.accounts.plans.resolve(stored?.plan ?? 'free', stored?.overrides ?? {});
    const terms = { pages: limits.renderPages, deadlineRenders: limits.deadlineRenders };
    remember(plans, account, { terms, until: at + PLAN_MEMORY_MS });
    return terms;
  }

  const windowOf = (at: number) => ({ window: Math.floor(at / windowMs), retryAfterSeconds: Math.max(1, Math.ceil((windowMs - (at % windowMs)) / 1000)) });

  function throttled(allowed: number, retryAfterSeconds: number): ApiError {
    return problem(
      'rate_limited',
      `This account's renders ran to the render deadline ${allowed} times in ${Math.round(windowMs / 60_000)} minutes, what its plan allows (limit ${LIMIT_NAMES.deadlineRenders}); renders are refused for ${secondsText(retryAfterSeconds)} more. Requests without js_render still run.`,
      { members: { limit: LIMIT_NAMES.deadlineRenders, allowed }, headers: { 'Retry-After': String(retryAfterSeconds) } },
    );
  }

  return {
    async pagesOf(account) {
      return (await termsOf(account)).pages;
    },

    async refusal(account) {
      const at = now();
      const { window, retryAfterSeconds } = windowOf(at);
      const { deadlineRenders } = await termsOf(account);
      const until = refused.get(account);
      if (until !== undefined && until > at) return throttled(deadlineRenders, retryAfterSeconds);
      // Places are taken in order, so the one at the limit tells whether the window is full.
      const full = deadlineRenders === 0 || (await records.findOne({ _id: `${account}|${window}|${deadlineRenders - 1}` })) !== null;
      if (!full) return undefined;
      remember(refused, account, (window + 1) * windowMs);
      return throttled(deadlineRenders, retryAfterSeconds);
    },

    async failed(account, error) {
      if (error.kind !== 'timeout' || error.heldPageMs === undefined || error.heldPageMs < deps.config.renderTimeoutMs / 2) return;
      try {
        const at = now();
        const { window } = windowOf(at);
        const { deadlineRenders } = await termsOf(account);
        const key = `${account}|${window}`;
        for (let n = nextPlace.get(key) ?? 0; n < deadlineRenders; n++) {
          try {
            await records.insertOne({ _id: `${key}|${n}`, account_id: account, window, at: new Date(at) });
            remember(nextPlace, key, n + 1);
            // The first record of a window clears what earlier windows left, every account's.
            if (n === 0) await records.deleteMany({ at: { $lt: new Date(window * windowMs) } });
            return;
          } catch (error) {
            if (!isDuplicateKey(error)) throw error;
          }
        }
        remember(nextPlace, key, deadlineRenders);
      } catch (error) {
        // The answer (a 504) stands; only the count is missed.
        deps.log?.warn('a render that ran to its deadline could not be counted', { account, error: (error as Error).message });
      }
    },
  };
}
