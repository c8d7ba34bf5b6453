/**
 * Counts of an account's costly failures per window, for the whole service: the deadline renders
 * (render-rules.ts) and the pages refused at a parse cap (page-rules.ts). Failures are never charged
 * (the interface's cost model), so what they cost the machine is counted against an allowance instead.
 *
 * Each failure is an insert-only record `<account>|<window>|<n>` for the first free `n` below the
 * allowance: the unique `_id` keeps the count exact across processes, as for signups, and since places
 * are taken in order, the record at the allowance's last place tells whether the window is full (one
 * read by `_id`). The first record of a window clears what earlier windows left, every account's.
 */
import type { Collection, Db } from 'mongodb';
import type { IndexRegistration } from '../../base/db';
import { isDuplicateKey } from '../../base/db';
import type { Accounts } from '../accounts';
import type { Plan } from '../accounts/plans';

interface CountDoc {
  _id: string;
  account_id: string;
  window: number;
  at: Date;
}

/** The collections counted this way, each with the index its clearing reads. */
export const WINDOW_COUNT_COLLECTIONS = ['deadline_renders', 'capped_pages'] as const;
export type WindowCountCollection = (typeof WINDOW_COUNT_COLLECTIONS)[number];

export const WINDOW_COUNT_INDEXES: IndexRegistration = Object.fromEntries(WINDOW_COUNT_COLLECTIONS.map((name) => [name, [{ key: { at: 1 }, name: 'at' }]]));

/** Accounts remembered at most (plans, refusals, next free places); past it, forgotten at once. */
const MAX_REMEMBERED = 10_000;
/** How long an account's plan is used before it is read again. */
const PLAN_MEMORY_MS = 30_000;

export interface WindowCounts {
  readonly windowMs: number;
  /** The window `at` falls in, and the seconds until it ends (at least 1). */
  windowOf(at: number): { window: number; retryAfterSeconds: number };
  /** Whether the account's window holding `at` has `allowed` records already. */
  full(account: string, allowed: number, at: number): Promise<boolean>;
  /** Counts one failure at `at`; true when it took the window's last place (or none was left). */
  count(account: string, allowed: number, at: number): Promise<boolean>;
}

export function remember<V>(map: Map<string, V>, key: string, value: V): void {
  if (map.size >= MAX_REMEMBERED && !map.has(key)) map.clear();
  map.set(key, value);
}

/**
 * An account's limits, read once per PLAN_MEMORY_MS. An account gone meanwhile finishes what is in
 * flight on the free plan's terms.
 */
export function limitsMemory(accounts: Pick<Accounts, 'store' | 'plans'>, now: () => number): (account: string) => Promise<Plan['limits']> {
  const known = new Map<string, { limits: Plan['limits']; until: number }>();
  return async (account) => {
    const at = now();
    const held = known.get(account);
    if (held && held.until > at) return held.limits;
    const stored = await accounts.store.account(account);
    const { limits } = accounts.plans.resolve(stored?.plan ?? 'free', stored?.overrides ?? {});
    remember(known, account, { limits, until: at + PLAN_MEMORY_MS });
    return limits;
  };
}

export function createWindowCounts(db: Db, name: WindowCountCollection, windowMs: number): WindowCounts {
  const records: Collection<CountDoc> = db.collection<CountDoc>(name);
  /** `<account>|<window>` → the lowest place not known to be taken. */
  const nextPlace = new Map<string, number>();
  const windowOf = (at: number) => ({ window: Math.floor(at / windowMs), retryAfterSeconds: Math.max(1, Math.ceil((windowMs - (at % windowMs)) / 1000)) });

  return {
    windowMs,
    windowOf,

    async full(account, allowed, at) {
      if (allowed <= 0) return true;
      return (await records.findOne({ _id: `${account}|${windowOf(at).window}|${allowed - 1}` })) !== null;
    },

    async count(account, allowed, at) {
      const { window } = windowOf(at);
      const key = `${account}|${window}`;
      for (let n = nextPlace.get(key) ?? 0; n < allowed; n++) {
        try {
          await records.insertOne({ _id: `${key}|${n}`, account_id: account, window, at: new Date(at) });
          remember(nextPlace, key, n + 1);
          if (n === 0) await records.deleteMany({ at: { $lt: new Date(window * windowMs) } });
          return n === allowed - 1;
        } catch (error) {
          if (!isDuplicateKey(error)) throw error;
        }
      }
      remember(nextPlace, key, allowed);
      return true;
    },
  };
}
