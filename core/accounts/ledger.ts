/**
 * The usage ledger: one append-only chain (see chain.ts) per account and period, whose head is the
 * usage record of that period: credits `used` (settled), `keys` (settled per API key) and the `holds`
 * still open (credits reserved by requests in flight).
 *
 * Consistency model. Every decision (may this reservation go ahead?) is taken on the newest entry of
 * the chain and becomes real only when the entry carrying it is inserted as the chain's next `seq`;
 * the unique `_id` lets exactly one writer extend a given entry, so two processes can never both spend
 * the last credit: the loser re-reads and decides again. No update is ever made, so FerretDB's
 * non-atomic updates do not matter, and no transaction is needed. `used` only grows by settlements
 * (and shrinks only by refunds of writes found to have landed after their requests were answered as
 * failed), so the usage record is exactly the sum of what succeeded. A hold that is never settled nor released
 * (its process died) lapses after CREDIT_HOLD_MS and its credits come back.
 */
import type { Collection } from 'mongodb';
import { ChainStore, DEFAULT_RETENTION, type Applied, type ChainDocument, type Retention } from './chain';
import type { UnknownOutcome } from '../../base/db';
import type { Clock } from '../../base/clock';
import type { Period } from './periods';

export interface OpenHold {
  /** API key id. */
  k: string;
  /** Credits held. */
  c: number;
  /** Lapses at (epoch ms). */
  e: number;
}

export interface LedgerState {
  used: number;
  keys: Record<string, number>;
  holds: Record<string, OpenHold>;
}

export interface Limits {
  /** Credits the account may use in the period. */
  credits: number;
  /** Credits this key may use in the period; null for no cap of its own. */
  keyCap: number | null;
}

export type LedgerOp =
  | { kind: 'reserve'; hold: string; key: string; credits: number; limits: Limits; ttlMs: number }
  | { kind: 'grow'; hold: string; key: string; credits: number; limits: Limits; ttlMs: number }
  | { kind: 'settle'; hold: string; key: string; credits: number }
  | { kind: 'release'; hold: string }
  /**
   * A process's allowance (allowances.ts): charge `drain` settled credits out of the hold, then make
   * the hold at least `need` credits, plus up to `want - need` more but never more than half of what
   * the account and the key have left beside it. Refused (the hold keeps what it had, minus the
   * drain) when `need` does not fit. The result's `credits` is what the hold carries afterwards.
   */
  | { kind: 'allot'; hold: string; key: string; drain: number; need: number; want: number; limits: Limits; ttlMs: number }
  /** Charges `drain` settled credits out of an allowance's hold and leaves it `keep` credits (0 closes it). */
  | { kind: 'drain'; hold: string; key: string; drain: number; keep: number; limits: Limits; ttlMs: number }
  /**
   * Takes back `credits` charged by a write whose outcome was unknown when its requests were answered
   * as failed (allowances.ts); found later to have landed. The only op that lowers `used`.
   */
  | { kind: 'refund'; hold: string; key: string; credits: number };

export type Refusal = 'credits' | 'key_cap';
/** `credits`: what an allowance's hold carries after an `allot` or a `drain`. */
export type LedgerResult = { ok: true; credits?: number } | { ok: false; refused: Refusal; credits?: number };

const initial = (): LedgerState => ({ used: 0, keys: {}, holds: {} });

function held(state: LedgerState, key?: string, now = -Infinity): number {
  let total = 0;
  for (const hold of Object.values(state.holds)) if ((key === undefined || hold.k === key) && hold.e > now) total += hold.c;
  return total;
}

/** Whether `extra` more credits fit under the account's and the key's limits. */
function fits(state: LedgerState, key: string, extra: number, limits: Limits): LedgerResult {
  if (extra <= 0) return { ok: true };
  if (state.used + held(state) + extra > limits.credits) return { ok: false, refused: 'credits' };
  if (limits.keyCap !== null && (state.keys[key] ?? 0) + held(state, key) + extra > limits.keyCap) {
    return { ok: false, refused: 'key_cap' };
  }
  return { ok: true };
}

/** Credits the account and the key have left beside what `hold` already carries. */
function leftBeside(state: LedgerState, hold: string, key: string, limits: Limits): { left: number; refused: Refusal } {
  const own = state.holds[hold]?.c ?? 0;
  const account = limits.credits - state.used - (held(state) - own);
  if (limits.keyCap === null) return { left: account, refused: 'credits' };
  const keyOwn = state.holds[hold]?.k === key ? own : 0;
  const keyLeft = limits.keyCap - (state.keys[key] ?? 0) - (held(state, key) - keyOwn);
  return keyLeft < account ? { left: keyLeft, refused: 'key_cap' } : { left: account, refused: 'credits' };
}

/** Moves `credits` settled under `hold` into `used` (the hold shrinks by as much). */
function charge(state: LedgerState, hold: string, key: string, credits: number): void {
  if (credits <= 0) return;
  state.used += credits;
  state.keys[key] = (state.keys[key] ?? 0) + credits;
  const open = state.holds[hold];
  if (open) state.holds[hold] = { ...open, c: Math.max(0, open.c - credits) };
}

export function applyLedger(previous: LedgerState, ops: LedgerOp[], now: number): Applied<LedgerState, LedgerResult> {
  const state: LedgerState = { used: previous.used, keys: { ...previous.keys }, holds: {} };
  const lapsed: string[] = [];
  for (const [id, hold] of Object.entries(previous.holds)) {
    if (hold.e > now) state.holds[id] = hold;
    else lapsed.push(id);
  }
  const log: unknown[] = [];
  const results: LedgerResult[] = [];
  let changed = false;
  for (const op of ops) {
    const open = state.holds[op.hold];
    if (op.kind === 'reserve' || op.kind === 'grow') {
      const extra = op.credits - (open?.c ?? 0);
      const verdict = fits(state, op.key, extra, op.limits);
      results.push(verdict);
      if (!verdict.ok || (open && extra === 0)) continue;
      state.holds[op.hold] = { k: op.key, c: op.credits, e: Math.max(open?.e ?? 0, now + op.ttlMs) };
      log.push({ op: op.kind, hold: op.hold, key: op.key, credits: op.credits });
    } else if (op.kind === 'allot' || op.kind === 'drain') {
      charge(state, op.hold, op.key, op.drain);
      const current = state.holds[op.hold]?.c ?? 0;
      let credits = current;
      if (op.kind === 'drain') {
        // A hold that lapsed meanwhile (its process stalled) may only come back within what is left.
        credits = op.keep <= current ? op.keep : Math.min(op.keep, Math.max(current, leftBeside(state, op.hold, op.key, op.limits).left));
        results.push({ ok: true, credits });
      } else if (op.need > current) {
        const { left, refused } = leftBeside(state, op.hold, op.key, op.limits);
        if (op.need > left) {
          results.push({ ok: false, refused, credits: current });
          // A refusal with nothing to charge changes nothing (and writes nothing).
          if (op.drain === 0) continue;
        } else {
          credits = op.need + Math.max(0, Math.min(op.want - op.need, Math.floor((left - op.need) / 2)));
          results.push({ ok: true, credits });
        }
      } else results.push({ ok: true, credits });
      if (credits > 0) state.holds[op.hold] = { k: op.key, c: credits, e: now + op.ttlMs };
      else delete state.holds[op.hold];
      log.push({ op: op.kind, hold: op.hold, key: op.key, credits: op.drain, held: credits });
    } else if (op.kind === 'refund') {
      state.used = Math.max(0, state.used - op.credits);
      state.keys[op.key] = Math.max(0, (state.keys[op.key] ?? 0) - op.credits);
      results.push({ ok: true });
      log.push({ op: 'refund', hold: op.hold, key: op.key, credits: op.credits });
    } else if (op.kind === 'settle') {
      // Always accepted: the work succeeded. A lapsed hold is charged all the same.
      delete state.holds[op.hold];
      state.used += op.credits;
      state.keys[op.key] = (state.keys[op.key] ?? 0) + op.credits;
      results.push({ ok: true });
      log.push({ op: 'settle', hold: op.hold, key: op.key, credits: op.credits });
    } else {
      results.push({ ok: true });
      if (!open) continue;
      delete state.holds[op.hold];
      log.push({ op: 'release', hold: op.hold });
    }
    changed = true;
  }
  if (changed && lapsed.length > 0) log.push({ op: 'lapse', holds: lapsed });
  return { state, results, changed, log };
}

export interface PeriodUsage {
  period: Period;
  used: number;
  held: number;
  keys: Record<string, number>;
}

export class Ledger {
  private readonly chains: ChainStore<LedgerState, LedgerOp, LedgerResult>;

  constructor(
    collection: Collection<ChainDocument<LedgerState>>,
    private readonly clock: Clock,
    /** How much of each chain is kept (LEDGER_RETENTION_HOURS); also what crawl billing writes with. */
    readonly retention: Retention | false = DEFAULT_RETENTION,
  ) {
    this.chains = new ChainStore(collection, { initial, apply: applyLedger }, clock, retention);
  }

  /** Appends that lost a race to another process (or a stale cache) and were retried. */
  get conflicts(): number {
    return this.chains.conflicts;
  }

  submit(accountId: string, period: Period, op: LedgerOp): Promise<LedgerResult> {
    return this.chains.submit(chainOf(accountId, period), op);
  }

  /** Whether a write that failed with an UnknownOutcome landed (rejects while the database cannot tell). */
  landed(outcome: Pick<UnknownOutcome, 'entry' | 'token'>): Promise<boolean> {
    return this.chains.landed(outcome);
  }

  async usage(accountId: string, period: Period): Promise<PeriodUsage> {
    const { state } = await this.chains.read(chainOf(accountId, period));
    return { period, used: state.used, held: held(state, undefined, this.clock.now()), keys: state.keys };
  }
}

export const chainOf = (accountId: string, period: Period): string => `${accountId}/${period}`;
