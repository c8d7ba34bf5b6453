/**
 * The per-account request budget in front of everything authenticated: a token bucket per account
 * (`requests_per_second` refilling up to `request_burst`) and a cap on the account's requests in
 * flight at once in this process (`requests_in_flight`). Both live in memory and are decided before
 * any database work, so a flood of requests from one account costs the API process a key-cache hit
 * and a 429 each, never a count in the database.
 *
 * The budget is the account's across every API process: each live process (api-processes.ts) takes
 * budget ÷ live processes (rate, burst and requests in flight alike, at least one request of each), so
 * n processes together admit what one would. A client whose connections all land on one process gets
 * that process's share only. The defaults (ACCOUNT_LIMITS) are sized from what the stack serves
 * (README "Request budget"): a client polling, paging results or sending a 100,000-task job never
 * meets them; a loop that ignores every answer does, before it can slow the other accounts.
 */
import type { AccountLimits } from '../../base/config';
import type { Clock } from '../../base/clock';

export type BudgetLimits = Pick<AccountLimits, 'requestsPerSecond' | 'requestBurst' | 'requestsInFlight'>;

/** Admitted (call `done` when the answer is sent) or refused, with the seconds until it may retry. */
export type BudgetOutcome = { ok: true; done: () => void } | { ok: false; reason: 'rate' | 'in_flight'; retryAfterSeconds: number; /** Until the bucket has a request again. */ waitMs: number };

interface Bucket {
  tokens: number;
  /** When `tokens` was last brought up to date (epoch ms). */
  at: number;
  inFlight: number;
  /** Refusals being held back (`hold`). */
  held: number;
  /** This process's share of the account's rate, as last taken (requests per second). */
  rate: number;
  /** When the last refusal held back is answered (epoch ms): the next one's turn comes a token later. */
  lastTurn: number;
}

/** A refusal over the rate is answered this much later (`hold`). */
const HOLD_MS = 1_000;
/** Refusals held back at once per account; beyond, they are answered at once. */
const HOLD_MAX_PER_ACCOUNT = 32;

/** Buckets kept at most; beyond, the full and idle ones are dropped (a full bucket is the default). */
const MAX_BUCKETS = 50_000;

export class RequestBudget {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly clock: Clock,
    /** Live API processes sharing the budget (api-processes.ts). */
    private readonly processes: () => number = () => 1,
  ) {}

  /** This process's share of an account's budget. */
  share(limits: BudgetLimits): BudgetLimits {
    const n = Math.max(1, this.processes());
    if (n === 1) return limits;
    return {
      requestsPerSecond: limits.requestsPerSecond / n,
      requestBurst: Math.max(1, Math.floor(limits.requestBurst / n)),
      requestsInFlight: Math.max(1, Math.floor(limits.requestsInFlight / n)),
    };
  }

  /** Takes one request of `accountId` under this process's share of `budget`. */
  take(accountId: string, budget: BudgetLimits): BudgetOutcome {
    const limits = this.share(budget);
    const now = this.clock.now();
    let bucket = this.buckets.get(accountId);
    if (!bucket) {
      if (this.buckets.size >= MAX_BUCKETS) this.prune(now, limits);
      bucket = { tokens: limits.requestBurst, at: now, inFlight: 0, held: 0, rate: limits.requestsPerSecond, lastTurn: 0 };
      this.buckets.set(accountId, bucket);
    } else {
      bucket.tokens = Math.min(limits.requestBurst, bucket.tokens + ((now - bucket.at) / 1000) * limits.requestsPerSecond);
      bucket.at = now;
      bucket.rate = limits.requestsPerSecond;
    }
    if (bucket.inFlight >= limits.requestsInFlight) return { ok: false, reason: 'in_flight', retryAfterSeconds: 1, waitMs: 0 };
    if (bucket.tokens < 1) {
      const wait = (1 - bucket.tokens) / Math.max(limits.requestsPerSecond, 1e-9);
      return { ok: false, reason: 'rate', retryAfterSeconds: Math.max(1, Math.ceil(wait)), waitMs: Math.ceil(wait * 1000) };
    }
    bucket.tokens -= 1;
    bucket.inFlight++;
    const held = bucket;
    let released = false;
    return {
      ok: true,
      done: () => {
        if (released) return;
        released = true;
        held.inFlight--;
      },
    };
  }

  /**
   * Holds back a refusal over the rate until its turn (`holdMs`), for at most HOLD_MAX_PER_ACCOUNT
   * refusals of the account at once (beyond, they are sent at once). A client that ignores Retry-After
   * and asks again at once then sends about one request per token past its budget, instead of as many
   * as the API can refuse (measured: 0.27 ms of the API's CPU each); a timer costs the event loop
   * nothing meanwhile.
   */
  async hold(accountId: string, refusal: { reason: 'rate' | 'in_flight'; waitMs?: number }): Promise<void> {
    const wait = this.holdMs(accountId, refusal);
    const bucket = this.buckets.get(accountId);
    if (wait === undefined || !bucket) return;
    bucket.held++;
    try {
      await new Promise((resolve) => setTimeout(resolve, wait));
    } finally {
      bucket.held--;
    }
  }

  /**
   * How long a refusal over the rate is held back (undefined: answered at once). Its turn is the
   * account's next token, and each refusal held after it gets the token after: with every refusal held
   * the same HOLD_MS, a client's connections refused together came back together, found the bucket
   * refilled and spent it at once, a burst of the account's requests each second that other accounts'
   * requests queued behind. Turns a token apart pace them at the account's rate instead. At most HOLD_MS.
   */
  holdMs(accountId: string, refusal: { reason: 'rate' | 'in_flight'; waitMs?: number }): number | undefined {
    const bucket = this.buckets.get(accountId);
    if (refusal.reason !== 'rate' || !bucket || bucket.held >= HOLD_MAX_PER_ACCOUNT) return undefined;
    const now = this.clock.now();
    const spacing = 1000 / Math.max(bucket.rate, 1e-9);
    const turn = Math.min(now + HOLD_MS, Math.max(now + (refusal.waitMs ?? spacing), bucket.lastTurn + spacing));
    bucket.lastTurn = turn;
    return turn - now;
  }

  private prune(now: number, limits: BudgetLimits): void {
    for (const [id, bucket] of this.buckets) {
      const refilled = bucket.tokens + ((now - bucket.at) / 1000) * limits.requestsPerSecond;
      if (bucket.inFlight === 0 && bucket.held === 0 && refilled >= limits.requestBurst) this.buckets.delete(id);
    }
  }
}
