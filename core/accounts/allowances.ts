/**
 * Credit allowances: reservations without a database write per request, for the synchronous Fetch
 * surface whose requests last milliseconds.
 *
 * A process holds, per account, API key and period, ONE hold in the usage ledger (its allowance) and
 * hands out reservations from it in memory. A settlement is durable before it returns: it joins the
 * allowance's next ledger write (`drain`, or the `allot` that grows the hold when it runs short), and
 * every settlement that arrived while the previous write was in flight rides the same one (group
 * commit). So a Fetch is answered 200 only once its charge is in the database, and when that write
 * fails (the database is away) the settlements in it are taken back and their requests fail, never
 * charged. The chain's rule still decides every credit (no two processes can spend the same one),
 * while a busy account costs about one write per write's round trip instead of two per request.
 *
 * Sizing: an allot grows the hold by what the waiting request needs plus headroom, the headroom being
 * at most CREDIT_ALLOWANCE and at most half of what the account (and the key) have left beside it, so
 * within one process the last credit goes exactly as with per-request holds, and processes sharing
 * an account near its limit leave each other half of what is left. An allowance unused for
 * IDLE_FLUSHES flushes is charged and closed.
 *
 * A Fetch whose price is known when it starts charges it AHEAD (charging.ts `Hold.prepay`): its
 * settlement joins the allowance's next write at once, while the page is fetched, so the write has
 * usually landed when the answer is ready; a dearer configuration settles the difference at the end,
 * and a failure (or a cheaper outcome) refunds what was charged before it is answered.
 *
 * Every CREDIT_FLUSH_MS a flush renews the holds in use and closes idle ones.
 *
 * Trade-offs: a process killed without stopping leaves its hold to lapse after ALLOWANCE_HOLD_MS (no
 * settled credit is lost: each was written before its request was answered); another process may
 * refuse a request while this one still holds unused headroom, until that allowance shrinks or
 * closes. A write whose outcome is unknown (the connection died after the insert was sent and the
 * check of its token failed too) is counted as failed: its requests are answered 503; the flushes
 * then look, once the database answers, whether it landed after all, and if so refund what it charged
 * (a process killed meanwhile leaves that charge in place: charged for a failure, never the reverse).
 */
import { randomBytes } from 'node:crypto';
import { isUnknownOutcome, type UnknownOutcome } from '../../base/db';
import type { Clock } from '../../base/clock';
import type { Ledger, LedgerOp, LedgerResult, Limits } from './ledger';
import type { Period } from './periods';
import type { Payer } from './principal';

export interface AllowanceOptions {
  /** Most headroom (credits) one allot takes beyond what is needed; 0 turns allowances off. */
  maxHeadroom: number;
  /** How often settled credits are charged to the ledger. */
  flushMs: number;
}

/** An allowance's hold lapses this long after its last write (a dead process's credits come back). */
export const ALLOWANCE_HOLD_MS = 60_000;
/** A hold is renewed when its last write is older than this. */
const RENEW_AFTER_MS = ALLOWANCE_HOLD_MS / 3;
/** An allowance with nothing reserved for this many flushes is charged and closed. */
export const IDLE_FLUSHES = 4;

/** A settlement waiting for the write that charges it. */
interface Settling {
  credits: number;
  done(error?: unknown): void;
}

/** One process's share of an account's credits for one key and period. */
export class Allowance {
  readonly hold = `h_pool_${randomBytes(10).toString('hex')}`;
  /** Credits the ledger hold carries (as last written: the ledger may carry more during a write). */
  granted = 0;
  /** Credits reserved by requests in flight. */
  reserved = 0;
  /** Credits settled and not yet charged to the ledger: the sum of `settling`'s and of the write in flight's. */
  pending = 0;
  /** Settlements waiting for the next ledger write, told when it is durable (or failed). */
  settling: Settling[] = [];
  /** Flushes in a row that found nothing reserved and nothing taken. */
  idle = 0;
  /** Taken from since the last flush. */
  used = false;
  lastWrite = 0;
  /** Charged and given back by a flush; requests take from a new allowance. */
  closed = false;
  /** Ledger writes of this allowance run one at a time, in order. */
  turn: Promise<unknown> = Promise.resolve();

  constructor(
    readonly payer: Payer,
    readonly period: Period,
  ) {}

  get free(): number {
    return this.granted - this.reserved - this.pending;
  }
}

export class Allowances {
  private readonly open = new Map<string, Allowance>();
  /** Allowances whose closing write failed after another took their place: flushed until charged. */
  private readonly orphans = new Set<Allowance>();
  /** Writes whose outcome is unknown and whose requests were answered as failed: refunded if they landed. */
  private readonly doubtful: Array<{ payer: Payer; period: Period; hold: string; credits: number; outcome: UnknownOutcome }> = [];
  /** Refunds of charges made ahead whose write failed: tried again at each flush. */
  private readonly refunds: Array<{ payer: Payer; period: Period; hold: string; credits: number }> = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ledger: Ledger,
    private readonly clock: Clock,
    private readonly options: AllowanceOptions,
  ) {}

  get enabled(): boolean {
    return this.options.maxHeadroom > 0;
  }

  /** Reserves `credits` from this process's allowance, growing it in the ledger when it runs short. */
  async take(payer: Payer, period: Period, credits: number): Promise<{ allowance: Allowance; result: LedgerResult }> {
    for (;;) {
      const id = idOf(payer, period);
      let allowance = this.open.get(id);
      if (!allowance) {
        allowance = new Allowance(payer, period);
        this.open.set(id, allowance);
      }
      allowance.used = true;
      const result = await this.tryFrom(allowance, credits);
      // Closed by a flush while this request waited for its write: start over on a new allowance.
      if (result !== 'closed') return { allowance, result };
    }
  }

  /** Reserves `credits` more from an allowance a hold already draws on (escalation). */
  async reserveFrom(allowance: Allowance, credits: number): Promise<LedgerResult> {
    const result = await this.tryFrom(allowance, credits);
    // An allowance with credits reserved is never closed.
    if (result === 'closed') throw new Error(`allowance ${allowance.hold} closed while credits were reserved`);
    return result;
  }

  private async tryFrom(allowance: Allowance, credits: number): Promise<LedgerResult | 'closed'> {
    while (allowance.free < credits) {
      if (allowance.closed) return 'closed';
      const result = await this.write(allowance, () => {
        if (allowance.free >= credits || allowance.closed) return undefined;
        const need = allowance.reserved + credits;
        return {
          kind: 'allot' as const,
          hold: allowance.hold,
          key: allowance.payer.keyId,
          drain: allowance.pending,
          need,
          want: need + this.options.maxHeadroom,
          limits: limitsOf(allowance.payer),
          ttlMs: ALLOWANCE_HOLD_MS,
        };
      });
      if (result && !result.ok) return result;
    }
    if (allowance.closed) return 'closed';
    allowance.reserved += credits;
    return { ok: true };
  }

  /**
   * A hold drawing `held` credits settled at `credits`: resolves once the credits are charged in the
   * ledger, rejects (nothing charged, the reservation given back) when that write fails.
   */
  settle(allowance: Allowance, held: number, credits: number): Promise<void> {
    allowance.reserved -= held;
    if (credits === 0) return Promise.resolve();
    allowance.pending += credits;
    return new Promise<void>((resolve, reject) => {
      allowance.settling.push({ credits, done: (error) => (error === undefined ? resolve() : reject(error)) });
      // Built when its turn comes: it takes whatever settled meanwhile, or nothing if an earlier
      // write already did (this settlement's outcome then comes from that one).
      this.write(allowance, () => (allowance.pending > 0 ? this.drainOp(allowance, allowance.closed) : undefined)).catch(() => undefined);
    });
  }

  /** A hold drawing `held` credits released (nothing charged). */
  release(allowance: Allowance, held: number): void {
    allowance.reserved -= held;
  }

  /**
   * Takes back `credits` a hold charged ahead (Hold.prepay) for work that then failed or cost less:
   * resolves once the refund is in the ledger. A refund that cannot be written now is kept and tried
   * again at every flush (a process that dies meanwhile leaves the charge: charged for a failure,
   * never the reverse).
   */
  async refund(allowance: Allowance, credits: number): Promise<void> {
    if (credits <= 0) return;
    const refund = { payer: allowance.payer, period: allowance.period, hold: allowance.hold, credits };
    try {
      await this.writeRefund(refund);
    } catch (error) {
      this.refunds.push(refund);
      throw error;
    }
  }

  private writeRefund(refund: { payer: Payer; period: Period; hold: string; credits: number }): Promise<LedgerResult> {
    return this.ledger.submit(refund.payer.accountId, refund.period, { kind: 'refund', hold: refund.hold, key: refund.payer.keyId, credits: refund.credits });
  }

  /** Refunds that failed: tried again, each at most once per flush. */
  private async retryRefunds(): Promise<void> {
    for (const refund of this.refunds.splice(0)) {
      try {
        await this.writeRefund(refund);
      } catch (error) {
        // Unknown outcome: it may have landed, so not again (rather charged for a failure than twice refunded).
        if (!isUnknownOutcome(error)) this.refunds.push(refund);
      }
    }
  }

  /** Charges what the account's allowances in this process settled (before a usage read). */
  async flushAccount(accountId: string): Promise<void> {
    await Promise.all([...this.open.values()].filter((allowance) => allowance.payer.accountId === accountId).map((allowance) => this.flushOne(allowance, 'charge')));
  }

  /** Charges every allowance's settled credits, closes idle ones and renews the rest. */
  async flush(): Promise<void> {
    await this.resolveDoubts();
    await this.retryRefunds();
    const all = [...this.open.values(), ...this.orphans];
    this.orphans.clear();
    const outcomes = await Promise.allSettled(all.map((allowance) => this.flushOne(allowance, 'periodic')));
    const failed = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** Refunds the doubtful writes that landed after all; drops those that did not; keeps the rest for later. */
  private async resolveDoubts(): Promise<void> {
    for (const doubt of this.doubtful.splice(0)) {
      try {
        if (await this.ledger.landed(doubt.outcome)) {
          await this.ledger.submit(doubt.payer.accountId, doubt.period, { kind: 'refund', hold: doubt.hold, key: doubt.payer.keyId, credits: doubt.credits });
        }
      } catch (error) {
        // The database is still away: later. (A refund whose own outcome is unknown is not retried,
        // as it may have landed: rather charged for a failure than served for free.)
        if (!isUnknownOutcome(error)) this.doubtful.push(doubt);
      }
    }
  }

  start(): void {
    if (!this.enabled || this.timer) return;
    const tick = (): void => {
      this.timer = undefined;
      this.flush()
        .catch(() => undefined) // the database is away: the credits stay pending for the next flush
        .finally(() => {
          if (this.running) this.timer = setTimeout(tick, this.options.flushMs).unref();
        });
    };
    this.running = true;
    this.timer = setTimeout(tick, this.options.flushMs).unref();
  }

  /** Charges everything settled and closes every allowance with nothing reserved (graceful stop). */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.resolveDoubts();
    await this.retryRefunds();
    const all = [...this.open.values(), ...this.orphans];
    this.orphans.clear();
    await Promise.all(all.map((allowance) => this.flushOne(allowance, 'stop')));
  }

  private running = false;

  /** `charge`: write what was settled; `periodic`: also renew, and close when idle; `stop`: close unless in use. */
  private async flushOne(allowance: Allowance, mode: 'charge' | 'periodic' | 'stop'): Promise<void> {
    if (mode === 'stop') allowance.idle = IDLE_FLUSHES;
    if (mode === 'periodic') {
      allowance.idle = allowance.reserved === 0 && !allowance.used ? allowance.idle + 1 : 0;
      allowance.used = false;
    }
    let closing = false;
    try {
      await this.write(allowance, () => {
        // Decided when the write's turn comes: a request may have reserved while earlier writes ran.
        closing = allowance.idle >= IDLE_FLUSHES && allowance.reserved === 0 && !allowance.closed;
        const renew = allowance.granted > 0 && this.clock.now() - allowance.lastWrite > RENEW_AFTER_MS;
        if (!closing && !renew && allowance.pending === 0) return undefined;
        if (closing) {
          allowance.closed = true;
          if (this.open.get(idOf(allowance.payer, allowance.period)) === allowance) this.open.delete(idOf(allowance.payer, allowance.period));
          // Never granted anything (refused from the start): nothing to write.
          if (allowance.granted === 0 && allowance.pending === 0) return undefined;
        }
        return this.drainOp(allowance, closing);
      });
    } catch (error) {
      if (closing) {
        // Not charged: keep it open so that the next flush tries again.
        allowance.closed = false;
        const id = idOf(allowance.payer, allowance.period);
        if (!this.open.has(id)) this.open.set(id, allowance);
        else this.orphans.add(allowance);
      }
      throw error;
    }
  }

  /** Charges what settled and leaves the hold carrying the rest of the allowance (nothing when closing). */
  private drainOp(allowance: Allowance, closing: boolean): Extract<LedgerOp, { kind: 'drain' }> {
    return {
      kind: 'drain',
      hold: allowance.hold,
      key: allowance.payer.keyId,
      drain: allowance.pending,
      keep: closing ? 0 : allowance.granted - allowance.pending,
      limits: limitsOf(allowance.payer),
      ttlMs: ALLOWANCE_HOLD_MS,
    };
  }

  /**
   * Runs one ledger write for the allowance after the ones before it; `op` is built when its turn
   * comes (undefined: nothing to write any more). Memory follows what the ledger says it carries.
   * Every write charges all that settled (`drain` = `pending`), so the settlements waiting are told its
   * outcome; a failed write takes their credits back out of `pending` (they were not charged).
   */
  private write(
    allowance: Allowance,
    op: () => Extract<LedgerOp, { kind: 'allot' | 'drain' }> | undefined,
  ): Promise<LedgerResult | undefined> {
    const next = allowance.turn.then(async () => {
      const chosen = op();
      if (!chosen) return undefined;
      const riding = chosen.drain > 0 ? allowance.settling.splice(0) : [];
      let result: LedgerResult;
      try {
        result = await this.ledger.submit(allowance.payer.accountId, allowance.period, chosen);
      } catch (error) {
        allowance.pending -= chosen.drain;
        for (const settling of riding) settling.done(error);
        if (isUnknownOutcome(error) && chosen.drain > 0) {
          this.doubtful.push({ payer: allowance.payer, period: allowance.period, hold: allowance.hold, credits: chosen.drain, outcome: error });
        }
        throw error;
      }
      allowance.pending -= chosen.drain;
      allowance.granted = result.credits ?? 0;
      allowance.lastWrite = this.clock.now();
      for (const settling of riding) settling.done();
      return result;
    });
    allowance.turn = next.catch(() => undefined);
    return next;
  }
}

const idOf = (payer: Payer, period: Period): string => `${payer.accountId}/${payer.keyId}/${period}`;
const limitsOf = (payer: Payer): Limits => ({ credits: payer.plan.credits, keyCap: payer.keyCap });
