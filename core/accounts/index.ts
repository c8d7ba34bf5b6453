/**
 * Accounts, API keys, plans, usage and concurrency, as one service built once per process:
 *
 *   request ─> keys.check (cached) ─> Principal ─┬─> slots.acquire / release   (Fetch only; in memory)
 *                                                └─> charging.reserve ─> work ─> settle | release
 *
 * Every collection here is written insert-first so that limits stay exact on FerretDB (see chain.ts,
 * ledger.ts, slots.ts, store.ts, signups.ts for each one's rule).
 */
import type { Db } from 'mongodb';
import type { Config } from '../../base/config';
import type { Logger } from '../../base/log';
import { ApiProcesses } from './api-processes';
import { AuthFailureLimiter } from './auth-failures';
import { RefusalHold } from './refusal-hold';
import { DatabaseShare } from './database-share';
import { Allowances } from './allowances';
import { retentionOf, type ChainDocument } from './chain';
import { Charging } from './charging';
import { systemClock, type Clock } from '../../base/clock';
import { KeyCache } from './key-cache';
import { Ledger, type LedgerState } from './ledger';
import { LimitGate } from './limit-gate';
import { PlanCatalogue, type PlanConfig } from './plans';
import type { Principal } from './principal';
import { RateLimiter } from './rate-limits';
import { RequestBudget } from './request-budget';
import { Signups, type SignupDoc } from './signups';
import { SlotPool, type ClaimState } from './slots';
import { AccountsError, AccountStore } from './store';

export type AccountsConfig = PlanConfig &
  Pick<Config, 'keyCacheTtlMs' | 'slotLeaseMs' | 'slotClaimIdleMs' | 'creditHoldMs' | 'creditAllowance' | 'creditFlushMs' | 'ledgerRetentionHours' | 'signupRateLimit' | 'signupRateWindowMs'> &
  Partial<Pick<Config, 'limitRefusalMemoryMs' | 'authFailureBurst' | 'authFailuresPerMinute' | 'authFailureHoldMs' | 'authFailureHoldsPerNetwork' | 'workerHeartbeatMs' | 'accountDatabaseSharePercent'>>;

export interface Accounts {
  clock: Clock;
  plans: PlanCatalogue;
  store: AccountStore;
  keys: KeyCache;
  charging: Charging;
  /** This process's credit allowances (the Fetch surface's reservations). */
  allowances: Allowances;
  ledger: Ledger;
  slots: SlotPool;
  signups: Signups;
  /** Request rate limits of the routes that need no key or act on demand (shared by every route of the process). */
  rates: RateLimiter;
  /** The per-account request budget, checked in memory after the key (request-budget.ts). */
  budget: RequestBudget;
  /** Failed key look-ups per client network, checked in memory before the database (auth-failures.ts). */
  authFailures: AuthFailureLimiter;
  /** Refusals of networks over their failed look-ups, held a moment before they are answered (refusal-hold.ts). */
  refusalHold: RefusalHold;
  /** What an account holds at once, in numbered slots shared by every process (limit-gate.ts). */
  holdings: LimitGate;
  /** Each account's share of this process's database connections (database-share.ts). */
  databaseShare: DatabaseShare;
  /** The live API processes, whose number divides the request budget and the failed look-ups (api-processes.ts). */
  processes: ApiProcesses;
  /** The principal of a stored account and key, for work that runs outside a request (activities). */
  principalFor(accountId: string, keyId: string): Promise<Principal>;
  /** Starts background work (renewing slot claims, giving back unused slots, charging allowances). */
  start(): void;
  /** Records this process among the live API processes (api/main.ts): the per-process limits become shares. */
  serve(): Promise<void>;
  /** Gives back this process's unused slots and credit allowances and stops background work. */
  stop(): Promise<void>;
}

export function createAccounts(options: { db: Db; config: AccountsConfig; log: Logger; clock?: Clock }): Accounts {
  const { db, config, log } = options;
  const clock = options.clock ?? systemClock;
  const plans = new PlanCatalogue(config);
  const store = new AccountStore(db, clock);
  const claims = db.collection<ChainDocument<ClaimState>>('slot_claims');
  const retention = retentionOf(config.ledgerRetentionHours);
  const slots = new SlotPool(claims, clock, log.child({ module: 'slots' }), config.slotLeaseMs, config.slotClaimIdleMs, retention);
  const processes = new ApiProcesses(db, slots.instance, config.workerHeartbeatMs ?? 1_000, log.child({ module: 'api-processes' }));
  const live = (): number => processes.count;
  const authFailures = new AuthFailureLimiter(clock, { burst: config.authFailureBurst ?? 50, perMinute: config.authFailuresPerMinute ?? 60 }, live);
  const keys = new KeyCache(store, plans, clock, config.keyCacheTtlMs, authFailures);
  const ledger = new Ledger(db.collection<ChainDocument<LedgerState>>('usage_ledger'), clock, retention);
  const allowances = new Allowances(ledger, clock, { maxHeadroom: config.creditAllowance, flushMs: config.creditFlushMs });
  const charging = new Charging(ledger, clock, config.creditHoldMs, allowances);
  const signups = new Signups(db.collection<SignupDoc>('signups'), store, clock, config.signupRateLimit, config.signupRateWindowMs);
  return {
    clock,
    plans,
    store,
    keys,
    authFailures,
    refusalHold: new RefusalHold({ holdMs: config.authFailureHoldMs ?? 1_000, perNetwork: config.authFailureHoldsPerNetwork ?? 16 }),
    charging,
    allowances,
    ledger,
    slots,
    signups,
    rates: new RateLimiter(db),
    budget: new RequestBudget(clock, live),
    processes,
    // The driver's pool of this process (maxPoolSize: 100 unless the connection string says otherwise).
    databaseShare: DatabaseShare.of(db.client.options.maxPoolSize, config.accountDatabaseSharePercent ?? 25),
    holdings: new LimitGate(db, clock, config.limitRefusalMemoryMs ?? 1_500),
    async principalFor(accountId, keyId) {
      const account = await store.liveAccount(accountId);
      const key = await store.keyById(keyId);
      if (key.account_id !== accountId) throw new AccountsError('key_not_found', `No API key ${keyId} on ${accountId}.`);
      return {
        accountId,
        keyId,
        plan: plans.resolve(account.plan, account.overrides ?? {}),
        keyCap: key.credit_cap ?? null,
        isAgent: account.is_agent,
        claimed: Boolean(account.claimed_at),
      };
    },
    start() {
      slots.start();
      allowances.start();
    },
    serve: () => processes.start(),
    async stop() {
      await Promise.all([slots.stop(), allowances.stop(), processes.stop()]);
    },
  };
}

export { ACCOUNT_INDEXES } from './indexes';
export { ManualClock, systemClock, type Clock } from '../../base/clock';
export { costOf, FETCH_CONFIGURATIONS, Hold, refusalError, type ChargeSurface } from './charging';
export { periodBounds, periodOf, type Period } from './periods';
export { FREE_PLAN, type Plan } from './plans';
export type { Payer, Principal } from './principal';
export { isAccountsError, MAX_KEYS_PER_ACCOUNT } from './store';
