/**
 * The usage ledger: one append-only chain (see chain.ts) per account and period, whose head is the
 * usage record of that period: credits `used` (settled), `keys` (settled per API key) and the `holds`
 * still open (credits reserved by requests in flight).
 *
 * Consistency model. Every decision (may this reservation go ahead?) is taken on the newest entry of
 * the chain and becomes real only when the entry carrying it is inserted as the chain's next `seq`;
 * the unique `_id` lets exactly one writer extend a given entry, so two processes can never both spend
 * the last credit: the loser re-reads and decides again. No update is ever made, so FerretDB's
 * non-atomic updates do not matter, and no transaction is needed. `used` only grows by settlements,
 * so the usage record is exactly the sum of what succeeded. A hold that is never settled nor released
 * (its process died) lapses after CREDIT_HOLD_MS and its credits come back.
 */
import type { Collection } from 'mongodb';
import { ChainStore, type Applied, type ChainDocument } from './chain';
import type { Clock } from './clock';
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
  | { kind: 'release'; hold: string };

export type Refusal = 'credits' | 'key_cap';
export type LedgerResult = { ok: true } | { ok: false; refused: Refusal };

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
  ) {
    this.chains = new ChainStore(collection, { initial, apply: applyLedger }, clock);
  }

  /** Appends that lost a race to another process (or a stale cache) and were retried. */
  get conflicts(): number {
    return this.chains.conflicts;
  }

  submit(accountId: string, period: Period, op: LedgerOp): Promise<LedgerResult> {
    return this.chains.submit(chainOf(accountId, period), op);
  }

  async usage(accountId: string, period: Period): Promise<PeriodUsage> {
    const { state } = await this.chains.read(chainOf(accountId, period));
    return { period, used: state.used, held: held(state, undefined, this.clock.now()), keys: state.keys };
  }
}

export const chainOf = (accountId: string, period: Period): string => `${accountId}/${period}`;
