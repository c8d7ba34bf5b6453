/**
 * Charging, as every surface uses it: RESERVE the credits a request may cost before doing the work,
 * GROW the reservation before escalating to a dearer configuration, SETTLE it to the actual cost once
 * the work succeeded, RELEASE it when the work failed (failed requests are never charged).
 *
 *   const hold = await charging.reserve(principal, costOf({ jsRender: false, premiumProxy: false }), 'fetch');
 *   try { …; await hold.grow(5, 'fetch'); …; await hold.settle(5); } catch (e) { await hold.release(); throw e; }
 *
 * or `charging.charge(principal, 'fetch', 1, async (hold) => ({ value, credits }))`, which does the same.
 *
 * Consistency model (ledger.ts and chain.ts have the details): each account and month has an
 * append-only chain of usage entries; a reservation is granted only by inserting the next entry with
 * the new totals under a unique `_id`, so across any number of processes exactly one writer can extend
 * a given state and nobody can spend a credit someone else already holds. Inside a process the
 * operations of one account are queued and written in batches. Only settlements add to `used`, so the
 * usage record is the sum of what succeeded; holds of a crashed process lapse after CREDIT_HOLD_MS.
 * `settle` resolves once the charge is durable, and rejects (nothing charged) when it could not be
 * written: a caller answers success only after it resolved.
 */
import { randomBytes } from 'node:crypto';
import { problem, type ApiError } from '../../base/errors';
import type { Allowance, Allowances } from './allowances';
import type { Clock } from '../../base/clock';
import type { Ledger, LedgerResult, PeriodUsage, Refusal } from './ledger';
import { periodOf, type Period } from './periods';
import type { Payer } from './principal';

export { costOf, FETCH_CONFIGURATIONS, type FetchConfiguration } from '../pricing';

/** Whose credits a request spends. */
export type ChargeSurface = 'fetch' | 'crawl' | 'extract' | 'batch';

/** The 402 a refusal becomes on each surface. */
export function refusalError(refused: Refusal, surface: ChargeSurface, payer: Payer): ApiError {
  if (surface === 'batch') {
    return problem(
      'payment_required',
      refused === 'key_cap'
        ? 'This API key reached its own credit cap for the period; the account’s other keys still work.'
        : 'The account has no credits left for this period.',
    );
  }
  if (refused === 'key_cap') {
    return problem(
      'AUTH014',
      `This API key reached its credit cap of ${payer.keyCap ?? 0} credits for the period; the account’s other keys still work.`,
    );
  }
  return problem('AUTH004', `The account used its ${payer.plan.credits} credits for this period; credits renew on the first day of next month (UTC).`);
}

const checkCredits = (credits: number): void => {
  if (!Number.isSafeInteger(credits) || credits < 0) throw new Error(`credits must be a whole number ≥ 0, got ${credits}`);
};

/** Credits reserved for one request; settle or release it exactly once. */
export class Hold {
  private done = false;
  /** Credits charged ahead (`prepay`), and the write that charges them. */
  private prepaid = 0;
  private prepaying: Promise<void> | undefined;

  constructor(
    private readonly charging: Charging,
    readonly id: string,
    readonly payer: Payer,
    /** The period the hold was taken in; it is settled in that period's ledger. */
    readonly period: Period,
    public credits: number,
    /** The process's allowance this hold draws on (`reservePooled`); none for a hold of its own. */
    readonly allowance?: Allowance,
  ) {}

  /** Raises the reservation to `credits` in total (escalation); refused with the surface's 402. */
  async grow(credits: number, surface: ChargeSurface): Promise<void> {
    const result = await this.tryGrow(credits);
    if (!result.ok) throw refusalError(result.refused, surface, this.payer);
  }

  async tryGrow(credits: number): Promise<LedgerResult> {
    checkCredits(credits);
    if (this.done) throw new Error(`hold ${this.id} is already closed`);
    const result = await this.charging.submit(this, { kind: 'grow', credits, limits: this.charging.limitsOf(this.payer) });
    if (result.ok) this.credits = credits;
    return result;
  }

  /**
   * Charges the credits held now, before the work ends, so that the ledger write overlaps the work (an
   * allowance hold only; nothing otherwise). `settle` then charges only a dearer outcome's difference
   * and waits for this write; `release`, or a cheaper outcome, refunds it before resolving.
   */
  prepay(): void {
    if (this.done || this.prepaying || !this.allowance) return;
    this.prepaid = this.credits;
    this.prepaying = this.charging.prepay(this, this.prepaid);
    // Awaited by settle or release; a failure here is theirs to report.
    this.prepaying.catch(() => undefined);
  }

  /** Charges `credits` (the configuration that succeeded) and closes the hold. */
  async settle(credits: number): Promise<void> {
    checkCredits(credits);
    if (this.done) throw new Error(`hold ${this.id} is already closed`);
    this.done = true;
    if (!this.prepaying) return void (await this.charging.submit(this, { kind: 'settle', credits }));
    await this.charging.closePrepaid(this, this.prepaid, this.prepaying, credits);
  }

  /** Returns the credits; safe to call after settle (it does nothing then) and more than once. */
  async release(): Promise<void> {
    if (this.done) return;
    this.done = true;
    if (!this.prepaying) return void (await this.charging.submit(this, { kind: 'release' }));
    await this.charging.closePrepaid(this, this.prepaid, this.prepaying, 0);
  }

  get closed(): boolean {
    return this.done;
  }
}

type HoldOp = { kind: 'grow'; credits: number; limits: ReturnType<Charging['limitsOf']> } | { kind: 'settle'; credits: number } | { kind: 'release' };

export class Charging {
  constructor(
    private readonly ledger: Ledger,
    private readonly clock: Clock,
    private readonly holdMs: number,
    private readonly allowances?: Allowances,
  ) {}

  /**
   * Like `reserve`, drawing on this process's allowance of the account (allowances.ts): no database
   * write unless the allowance runs short. For short synchronous requests; a plain hold when
   * allowances are off.
   */
  async reservePooled(payer: Payer, credits: number, surface: ChargeSurface): Promise<Hold> {
    checkCredits(credits);
    if (!this.allowances?.enabled) return this.reserve(payer, credits, surface);
    const period = periodOf(this.clock.now());
    const { allowance, result } = await this.allowances.take(payer, period, credits);
    if (!result.ok) throw refusalError(result.refused, surface, payer);
    return new Hold(this, allowance.hold, payer, period, credits, allowance);
  }

  /** Reserves `credits`, or throws the surface's 402 when the account or the key has not enough left. */
  async reserve(payer: Payer, credits: number, surface: ChargeSurface): Promise<Hold> {
    const result = await this.tryReserve(payer, credits);
    if ('refused' in result) throw refusalError(result.refused, surface, payer);
    return result;
  }

  /** Like `reserve`, with the refusal as a value (for activities, which fail their own way). */
  async tryReserve(payer: Payer, credits: number): Promise<Hold | { refused: Refusal }> {
    checkCredits(credits);
    const hold = new Hold(this, `h_${randomBytes(10).toString('hex')}`, payer, periodOf(this.clock.now()), credits);
    const result = await this.ledger.submit(payer.accountId, hold.period, {
      kind: 'reserve',
      hold: hold.id,
      key: payer.keyId,
      credits,
      limits: this.limitsOf(payer),
      ttlMs: this.holdMs,
    });
    return result.ok ? hold : { refused: result.refused };
  }

  /** Runs `work` under a reservation: settled to the credits it reports, released if it throws. */
  async charge<T>(
    payer: Payer,
    surface: ChargeSurface,
    credits: number,
    work: (hold: Hold) => Promise<{ value: T; credits: number }>,
  ): Promise<{ value: T; credits: number }> {
    const hold = await this.reserve(payer, credits, surface);
    try {
      const outcome = await work(hold);
      await hold.settle(outcome.credits);
      return outcome;
    } catch (error) {
      // An unreachable database must not hide the work's own error; the hold then lapses by itself.
      await hold.release().catch(() => undefined);
      throw error;
    }
  }

  /** The usage record of a period (the current one by default), with this process's allowances charged. */
  async usage(accountId: string, period: Period = periodOf(this.clock.now())): Promise<PeriodUsage> {
    await this.allowances?.flushAccount(accountId);
    return this.ledger.usage(accountId, period);
  }

  limitsOf(payer: Payer): { credits: number; keyCap: number | null } {
    return { credits: payer.plan.credits, keyCap: payer.keyCap };
  }

  /** @internal used by Hold: charges `credits` of an allowance hold now. */
  prepay(hold: Hold, credits: number): Promise<void> {
    if (!hold.allowance || !this.allowances) return Promise.resolve();
    return this.allowances.settle(hold.allowance, credits, credits);
  }

  /**
   * @internal used by Hold: closes a hold that charged `prepaid` ahead at `credits` in the end: the
   * rest of what it reserved is charged up to `credits` or given back, and what was charged beyond
   * `credits` is refunded once the charge ahead has landed (nothing to refund if it failed).
   */
  async closePrepaid(hold: Hold, prepaid: number, prepaying: Promise<void>, credits: number): Promise<void> {
    const allowance = hold.allowance;
    if (!allowance || !this.allowances) return;
    const rest = hold.credits - prepaid;
    if (credits > prepaid) {
      // A dearer configuration succeeded: its difference is charged only once the charge ahead landed.
      try {
        await prepaying;
      } catch (error) {
        this.allowances.release(allowance, rest);
        throw error;
      }
      await this.allowances.settle(allowance, rest, credits - prepaid);
      return;
    }
    if (credits === prepaid) {
      this.allowances.release(allowance, rest);
      await prepaying;
      return;
    }
    this.allowances.release(allowance, rest);
    const landed = await prepaying.then(
      () => true,
      () => false,
    );
    if (landed) await this.allowances.refund(allowance, prepaid - credits);
  }

  /** @internal used by Hold */
  async submit(hold: Hold, op: HoldOp): Promise<LedgerResult> {
    if (hold.allowance && this.allowances) {
      if (op.kind === 'grow') return this.allowances.reserveFrom(hold.allowance, Math.max(0, op.credits - hold.credits));
      // Awaited: the settlement is in the ledger before the request is answered (allowances.ts).
      if (op.kind === 'settle') await this.allowances.settle(hold.allowance, hold.credits, op.credits);
      else this.allowances.release(hold.allowance, hold.credits);
      return { ok: true };
    }
    const base = { hold: hold.id, key: hold.payer.keyId };
    return this.ledger.submit(
      hold.payer.accountId,
      hold.period,
      op.kind === 'grow'
        ? { ...base, kind: 'grow', credits: op.credits, limits: op.limits, ttlMs: this.holdMs }
        : op.kind === 'settle'
          ? { ...base, kind: 'settle', credits: op.credits }
          : { hold: hold.id, kind: 'release' },
    );
  }
}
