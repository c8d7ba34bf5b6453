/**
 * Concurrency slots: an account on a plan with N slots runs at most N Fetch requests at once across
 * every API process, and taking or freeing a slot costs no database round trip in steady state.
 *
 * Claims. Each API process holds a CLAIM on an account (a number of its slots, with an expiry) in the
 * account's append-only chain in `slot_claims` (chain.ts): the head is `{ claims: { <process>: {n, e} } }`
 * and a claim grows only in the entry inserted as the next `seq`, when the live claims then sum to at
 * most N. The unique `_id` lets one writer extend a given entry, so two processes never both take the
 * last slot, on FerretDB too (nothing is ever updated). Requests take slots from their process's claim
 * in memory; the claim grows (one awaited entry for all the requests waiting in this process) only
 * when it is used up, capped by what the other processes hold. A refusal writes nothing.
 *
 * Expiry. A claim lives SLOT_LEASE_MS from its last entry; the holder renews it every third of that,
 * and stops serving from it after two thirds without a renewal, so nobody reclaims a claim still in use
 * (API process clocks must agree to well within a third of SLOT_LEASE_MS). A dead process stops renewing
 * and its claim is dropped by the first entry written after it lapsed (FerretDB has no TTL). A request
 * still running when its claim lapsed (no database for a whole SLOT_LEASE_MS) keeps running.
 *
 * Fairness trade-off. Slots left unused for SLOT_CLAIM_IDLE_MS are given back in the background (never
 * awaited by a request): the claim shrinks to the most slots used at once in that window. Another
 * process gets them one to two windows after the first one's requests end; meanwhile its requests get
 * 429 AUTH008 (`Retry-After: 1`) although nothing runs. In exchange, steady load writes only renewals.
 * While every slot is busy, a slot freed in a process serves that process's next request: the plan
 * limits the account's total, not which process serves it.
 *
 * `inUse` (usage route, `Concurrency-Remaining`) counts the other processes' live claims as in use.
 */
import type { Collection } from 'mongodb';
import { newId } from '../../base/ids';
import type { Logger } from '../../base/log';
import { ChainStore, DEFAULT_RETENTION, type Applied, type ChainDocument, type Retention } from './chain';
import type { Clock } from '../../base/clock';

/** Per API process: `n` slots, honoured by the others until `e` (epoch ms). */
export type ClaimState = { claims: Record<string, { n: number; e: number }> };

/** Sets `instance`'s claim to `want` slots, or to as many as fit when it grows; `renew` pushes `e`. */
export type ClaimOp = { instance: string; want: number; limit: number; ttlMs: number; renew: boolean };

/** The claim now, the other processes' live claims, and when the claim lapses (0: none). */
export type ClaimResult = { granted: number; others: number; expires: number };

export interface Lease {
  id: string;
  accountId: string;
  /** Frees the slot; safe to call more than once. */
  release(): Promise<void>;
}

export type SlotGrant = { ok: true; lease: Lease; limit: number; inUse: number } | { ok: false; limit: number; inUse: number };

export function applyClaims(previous: ClaimState, ops: ClaimOp[], now: number): Applied<ClaimState, ClaimResult> {
  const claims: ClaimState['claims'] = {};
  const lapsed: string[] = [];
  for (const [id, claim] of Object.entries(previous.claims)) {
    if (claim.e > now) claims[id] = claim;
    else lapsed.push(id);
  }
  const results: ClaimResult[] = [];
  const log: unknown[] = [];
  let changed = false;
  for (const op of ops) {
    const own = claims[op.instance];
    const held = own?.n ?? 0;
    let others = 0;
    for (const [id, claim] of Object.entries(claims)) if (id !== op.instance) others += claim.n;
    const want = Math.max(0, op.want);
    // Shrinking is always allowed; growing only up to what the others leave (never below what is held).
    const granted = want <= held ? want : Math.min(want, Math.max(held, op.limit - others));
    if (granted === held && !(op.renew && held > 0)) {
      results.push({ granted, others, expires: own?.e ?? 0 });
      continue;
    }
    if (granted === 0) delete claims[op.instance];
    else claims[op.instance] = { n: granted, e: now + op.ttlMs };
    results.push({ granted, others, expires: granted === 0 ? 0 : now + op.ttlMs });
    log.push({ instance: op.instance, from: held, to: granted });
    changed = true;
  }
  if (changed && lapsed.length > 0) log.push({ lapsed });
  return { state: { claims }, results, changed, log };
}

type Waiter = { resolve(grant: SlotGrant): void; reject(error: unknown): void };

/** This process's view of one account. */
interface AccountSlots {
  id: string;
  limit: number;
  /** Slots this process may hand out: never more than its claim recorded in the chain. */
  claim: number;
  /** When the other processes stop honouring the claim. */
  expires: number;
  /** The other processes' claims at the last entry written (for the headers). */
  others: number;
  inUse: number;
  /** Most slots in use at once since `windowStart`. */
  peak: number;
  windowStart: number;
  waiters: Waiter[];
  shrinkTo: number | undefined;
  forceRenew: boolean;
  /** The write loop, while one runs (one per account and process). */
  flight: Promise<void> | undefined;
}

const MAX_ROUNDS = 64;

export class SlotPool {
  /** Identifies this process's claims. */
  readonly instance = newId('api');
  private readonly chains: ChainStore<ClaimState, ClaimOp, ClaimResult>;
  private readonly accounts = new Map<string, AccountSlots>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private leases = 0;

  constructor(
    collection: Collection<ChainDocument<ClaimState>>,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly leaseMs: number,
    private readonly idleMs: number,
    retention: Retention | false = DEFAULT_RETENTION,
  ) {
    this.chains = new ChainStore(collection, { initial: () => ({ claims: {} }), apply: applyClaims }, clock, retention);
  }

  /** Takes one of the account's `limit` slots, or says that all are in use. */
  acquire(accountId: string, limit: number): Promise<SlotGrant> {
    const slots = this.account(accountId, limit);
    if (slots.waiters.length === 0 && this.canTake(slots)) return Promise.resolve(this.take(slots));
    // Every slot runs here: no entry could say otherwise.
    if (slots.inUse >= limit) return Promise.resolve({ ok: false, limit, inUse: limit });
    this.ensureTimer();
    return new Promise<SlotGrant>((resolve, reject) => {
      slots.waiters.push({ resolve, reject });
      void this.write(slots);
    });
  }

  /** Slots of the account in use now: the other processes' live claims and this process's requests. */
  async inUse(accountId: string): Promise<number> {
    const { state } = await this.chains.read(accountId);
    const now = this.clock.now();
    let total = this.accounts.get(accountId)?.inUse ?? 0;
    for (const [id, claim] of Object.entries(state.claims)) if (id !== this.instance && claim.e > now) total += claim.n;
    return total;
  }

  /** Starts the background work: renewals, and giving back slots left unused. */
  start(): void {
    this.stopped = false;
    this.ensureTimer();
  }

  /** Renews every claim of this process now (the timer does it every third of SLOT_LEASE_MS). */
  async renew(): Promise<void> {
    await Promise.all(
      [...this.accounts.values()].map((slots) => {
        slots.forceRenew = true;
        return this.write(slots);
      }),
    );
  }

  /** Gives back every slot not in use and stops the background work (graceful shutdown). */
  async stop(): Promise<void> {
    this.abandon();
    await Promise.all(
      [...this.accounts.values()].map((slots) => {
        slots.shrinkTo = 0;
        return this.write(slots);
      }),
    );
  }

  /** Stops the background work without giving anything back: what a crashed process does (tests use it). */
  abandon(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private account(accountId: string, limit: number): AccountSlots {
    let slots = this.accounts.get(accountId);
    if (!slots) {
      const fresh = { claim: 0, expires: 0, others: 0, inUse: 0, peak: 0, waiters: [], forceRenew: false };
      slots = { ...fresh, id: accountId, limit, windowStart: this.clock.now(), shrinkTo: undefined, flight: undefined };
      this.accounts.set(accountId, slots);
    }
    slots.limit = limit;
    return slots;
  }

  private canTake(slots: AccountSlots): boolean {
    return slots.inUse < Math.min(slots.claim, slots.limit) && this.clock.now() < slots.expires - this.leaseMs / 3;
  }

  private take(slots: AccountSlots): SlotGrant {
    slots.inUse++;
    if (slots.inUse > slots.peak) slots.peak = slots.inUse;
    let held = true;
    const release = (): Promise<void> => {
      if (!held) return Promise.resolve();
      held = false;
      slots.inUse--;
      // A request waiting on a growing claim may have this slot at once.
      if (slots.waiters.length > 0 && this.canTake(slots)) (slots.waiters.shift() as Waiter).resolve(this.take(slots));
      return Promise.resolve();
    };
    const lease: Lease = { id: `${slots.id}:${this.instance}:${++this.leases}`, accountId: slots.id, release };
    return { ok: true, lease, limit: slots.limit, inUse: slots.others + slots.inUse };
  }

  /** Runs the account's write loop, or joins the one running; it ends when nothing is left to write. */
  private write(slots: AccountSlots): Promise<void> {
    slots.flight ??= this.run(slots);
    return slots.flight;
  }

  private async run(slots: AccountSlots): Promise<void> {
    await Promise.resolve(); // lets `flight` be set, and requests arriving in the same tick join the entry
    try {
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const op = this.nextOp(slots);
        if (!op) return;
        if (op.want < slots.claim) slots.claim = op.want; // give back locally before the chain says so
        const asked = slots.inUse + slots.waiters.length;
        let result: ClaimResult;
        try {
          result = await this.chains.submit(slots.id, op);
        } catch (error) {
          this.log.warn('could not write a concurrency slot claim', { account_id: slots.id, error });
          for (const waiter of slots.waiters.splice(0)) waiter.reject(error);
          return;
        }
        slots.claim = result.granted;
        slots.expires = result.expires;
        slots.others = result.others;
        while (slots.waiters.length > 0 && this.canTake(slots)) (slots.waiters.shift() as Waiter).resolve(this.take(slots));
        // Capped by the limit or the other processes: the requests still waiting would be refused alike.
        if (result.granted < asked) this.refuseWaiters(slots);
      }
      this.refuseWaiters(slots);
    } finally {
      slots.flight = undefined;
    }
  }

  private refuseWaiters(slots: AccountSlots): void {
    const inUse = Math.min(slots.limit, slots.others + slots.inUse);
    for (const waiter of slots.waiters.splice(0)) waiter.resolve({ ok: false, limit: slots.limit, inUse });
  }

  /** What the account's claim should become next, if anything: grow for waiters, shrink, or renew. */
  private nextOp(slots: AccountSlots): ClaimOp | undefined {
    const now = this.clock.now();
    const renew = slots.forceRenew || now >= slots.expires - (2 * this.leaseMs) / 3;
    slots.forceRenew = false;
    let want: number;
    if (slots.waiters.length > 0) {
      want = Math.min(slots.limit, Math.max(slots.claim, slots.inUse + slots.waiters.length));
      slots.shrinkTo = undefined;
    } else if (slots.shrinkTo !== undefined && slots.shrinkTo < slots.claim) {
      want = Math.max(slots.shrinkTo, slots.inUse);
      slots.shrinkTo = undefined;
    } else if (renew && slots.claim > 0) {
      want = slots.claim;
    } else {
      slots.shrinkTo = undefined;
      return undefined;
    }
    return { instance: this.instance, want, limit: slots.limit, ttlMs: this.leaseMs, renew };
  }

  private ensureTimer(): void {
    if (this.timer || this.stopped) return;
    this.timer = setInterval(() => this.tick(), Math.max(50, Math.min(this.idleMs, Math.floor(this.leaseMs / 6))));
    this.timer.unref();
  }

  /** Gives back slots unused for a whole window, renews claims, forgets idle accounts. */
  private tick(): void {
    const now = this.clock.now();
    for (const slots of this.accounts.values()) {
      if (now - slots.windowStart >= this.idleMs * 0.9) { // timers may fire a little early
        const keep = Math.max(slots.peak, slots.inUse);
        if (keep < slots.claim) slots.shrinkTo = keep;
        slots.peak = slots.inUse;
        slots.windowStart = now;
      }
      if (slots.claim === 0 && slots.inUse === 0 && slots.waiters.length === 0 && !slots.flight) {
        this.accounts.delete(slots.id);
      } else if (slots.shrinkTo !== undefined || (slots.claim > 0 && now >= slots.expires - (2 * this.leaseMs) / 3)) {
        void this.write(slots);
      }
    }
  }
}
