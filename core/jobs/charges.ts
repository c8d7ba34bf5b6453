/**
 * Billing of a job's slices (crawl pages, Batch tasks, Extract sample pages), exactly once per slice
 * even when a slice is run again after a crash. Each kind of job bills through its own instance
 * (core/crawls/charges.ts, core/batch/runs/charges.ts): its marker collection and hold prefix.
 *
 * Each slice reserves credits under ONE hold whose id is derived from (crawl, slice), grows it as its
 * pages need credits (1 per plain page; more when a dearer configuration is tried), and settles it
 * once with the credits of the pages that were billable. Before settling, the slice inserts its
 * marker `<kind>_charges/<job>|<slice>` (insert-only, unique): a later attempt of the same slice
 * that finds the marker knows the pages were billed and bills nothing; if that attempt finds the hold
 * still open in the ledger (the crash fell between marker and settle), it settles it with the
 * marker's credits. A hold whose attempt died before the marker is re-grown under the same id by the
 * next attempt (no double reservation) or lapses after CREDIT_HOLD_MS.
 *
 * This adapter uses the accounts module's `Hold` with a caller-chosen id and reads the ledger head to
 * see whether a hold is open; an idempotent `charging.settleOnce(key, …)` there would replace both.
 */
import { createHash } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { Hold, periodOf, systemClock, type Accounts, type Payer } from '../accounts';
import { ChainStore, type ChainDocument } from '../accounts/chain';
import { applyLedger, chainOf, type LedgerOp, type LedgerResult, type LedgerState } from '../accounts/ledger';
import { isDuplicateKey } from '../../base/db';


export interface SliceBill {
  /** An earlier attempt of this slice already billed its pages: everything is free now. */
  readonly alreadyBilled: boolean;
  /** Reserves `credits` more for a page; false when the account or the key cannot pay. */
  need(credits: number): Promise<boolean>;
  /** Gives back `credits` of what `need` reserved (a page that will not be billed). */
  giveBack(credits: number): void;
  /** Bills `credits` (the billable pages) and closes the hold. */
  settle(credits: number): Promise<void>;
}

/** A slice's billing marker (insert-only; `crawl_id` names the job whatever its kind: the stored field). */
export interface ChargeDoc {
  _id: string;
  crawl_id: string;
  hold: string;
  period: string;
  credits: number;
  at: Date;
}

const chargeMarkerId = (jobId: string, k: number | string): string => `${jobId}|${k}`;

/** Slice billing of a kind of job: its markers live (and expire) in its own collection, its holds under its prefix. */
export class JobCharges {
  private readonly charges: Collection<ChargeDoc>;
  private readonly ledger: ChainStore<LedgerState, LedgerOp, LedgerResult>;
  private readonly holdPrefix: string;

  constructor(
    db: Db,
    private readonly accounts: Accounts,
    options: { charges: Collection<ChargeDoc>; holdPrefix: string },
  ) {
    this.charges = options.charges;
    this.holdPrefix = options.holdPrefix;
    this.ledger = new ChainStore(
      db.collection<ChainDocument<LedgerState>>('usage_ledger'),
      { initial: () => ({ used: 0, keys: {}, holds: {} }), apply: applyLedger },
      systemClock,
      accounts.ledger.retention,
    );
  }

  /** The bill of slice `k` (or of a part of it, `<slice>.<part>`); `retried` (attempt > 1) looks for an earlier attempt's billing first. */
  async open(crawlId: string, k: number | string, payer: Payer, retried: boolean, prepay: number): Promise<SliceBill> {
    const holdId = sliceHoldId(crawlId, k, this.holdPrefix);
    const markerId = chargeMarkerId(crawlId, k);
    if (retried) {
      const marker = await this.charges.findOne({ _id: markerId });
      if (marker) {
        await this.finishSettle(payer, marker);
        return freeBill();
      }
    }
    const hold = new Hold(this.accounts.charging, holdId, payer, periodOf(this.accounts.clock.now()), 0);
    let reserved = 0;
    let wanted = 0;
    let turn: Promise<unknown> = Promise.resolve();
    const grow = (total: number): Promise<boolean> => {
      const next = turn.then(async () => {
        if (total <= reserved) return true;
        const result = await hold.tryGrow(total);
        if (result.ok) reserved = total;
        return result.ok;
      });
      turn = next.catch(() => undefined);
      return next;
    };
    if (prepay > 0) await grow(prepay);
    return {
      alreadyBilled: false,
      async need(credits) {
        wanted += credits;
        if (wanted <= reserved) return true;
        const ok = await grow(wanted);
        if (!ok) wanted -= credits;
        return ok;
      },
      giveBack(credits) {
        wanted = Math.max(0, wanted - credits);
      },
      settle: async (credits) => {
        await turn;
        if (credits === 0) {
          if (reserved > 0) await hold.release();
          return;
        }
        const marker: ChargeDoc = { _id: markerId, crawl_id: crawlId, hold: holdId, period: hold.period, credits, at: new Date(this.accounts.clock.now()) };
        try {
          await this.charges.insertOne(marker);
        } catch (error) {
          if (!isDuplicateKey(error)) throw error;
          // Billed by an attempt that raced this one: settle only if its hold is still open.
          const existing = await this.charges.findOne({ _id: markerId });
          if (existing) await this.finishSettle(payer, existing);
          return;
        }
        await hold.settle(credits);
      },
    };
  }

  /** Settles a marker's hold if the settle did not land (the hold is still open). */
  private async finishSettle(payer: Payer, marker: ChargeDoc): Promise<void> {
    const head = await this.ledger.read(chainOf(payer.accountId, marker.period));
    const open = head.state.holds[marker.hold];
    if (!open) return;
    const hold = new Hold(this.accounts.charging, marker.hold, payer, marker.period, open.c);
    await hold.settle(marker.credits);
  }
}

/** The hold of slice `k`: the same for every attempt of the slice. */
export const sliceHoldId = (crawlId: string, k: number | string, prefix = 'crawl'): string =>
  `h_${prefix}_${createHash('sha256').update(`${crawlId}|${k}`).digest('hex').slice(0, 24)}`;

function freeBill(): SliceBill {
  return {
    alreadyBilled: true,
    need: async () => true,
    giveBack: () => undefined,
    settle: async () => undefined,
  };
}
