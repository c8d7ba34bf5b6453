/**
 * What an account holds at once (MCP sessions, scheduled jobs, stored CSV inputs, exports being
 * written), limited across every API process by numbered slots (held-slots.ts), as active jobs are:
 *
 *   limit_slots  `_id = <account>|<limit>|<n>` (n < the plan's limit), `holder` the thing's id
 *
 * A creation takes a free slot of its account and limit by unique insert before it creates anything,
 * and gives it back when the creation fails; the thing's end (deleted, ended) gives it back through
 * `release`. A slot whose holder went without giving it back (expired, ended in a worker, a process
 * that died mid-creation) is reclaimed when the account's slots are all taken: the caller says which
 * of its holders still count (`HolderStates`); one with no record at all counts for CREATION_GRACE_MS
 * after its slot was taken, its creation being still on the way. Every read is an `_id` look-up.
 *
 * In the process, an account's creations of one resource still run one after the other: concurrent
 * creations would otherwise all reach for the same free slots and lose to each other, each loss a
 * read and an insert more (bench/limit-slots.ts measures it). And a refusal is remembered for
 * LIMIT_REFUSAL_MEMORY_MS: the account's next attempts are refused from memory, without the reads,
 * until that time passes or this process sees the account give one back (a place freed through
 * another process is seen when the memory ends).
 */
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from '../../base/db';
import { ApiError } from '../../base/errors';
import type { Clock } from '../../base/clock';
import { takeSlot, type Holding, type SlotRecords } from './held-slots';
import { quotaExceeded, type CountedLimit } from './limits';
import type { Principal } from './principal';

export type { CountedLimit };

/** The counted limits kept by slots, one per thing held (bytes and monitors' URLs are summed where they are stored). */
export type SlotLimit = Exclude<CountedLimit, 'storedInputBytes' | 'monitorUrls'>;

/** Of the holders asked about: `live` still counts, `ended` does not; a holder left out has no record. */
export type HolderStates = (holders: string[]) => Promise<Map<string, 'live' | 'ended'>>;

/** The thing a creation makes: its id (the slot's holder), how to tell whether such things still count. */
export interface LimitHolder {
  id: string;
  states: HolderStates;
  /** `Retry-After` of the refusal, when waiting frees a place (an export ends). */
  retryAfterSeconds?: number;
}

export interface LimitSlotDoc {
  _id: string;
  holder: string;
  account_id: string;
  limit: SlotLimit;
  at: Date;
}

/** A slot whose holder has no record counts this long: the creation that took it is still on the way. */
export const CREATION_GRACE_MS = 60_000;
/** Slot ids read per query. */
const READ_CHUNK = 500;
/** Slots a release looks through at least, so a plan made smaller since the slot was taken still frees it. */
const RELEASE_SPAN = 100;

interface Remembered {
  error: ApiError;
  until: number;
}

/** Refusals remembered at most; beyond, the memory is emptied (it only saves database work). */
const MAX_REMEMBERED = 10_000;

const slotId = (accountId: string, limit: SlotLimit, n: number): string => `${accountId}|${limit}|${n}`;
const slotIds = (accountId: string, limit: SlotLimit, from: number, to: number): string[] => Array.from({ length: Math.max(0, to - from) }, (_, index) => slotId(accountId, limit, from + index));

export class LimitGate {
  private readonly slots: Collection<LimitSlotDoc> | undefined;
  /** The tail of each account's queue of creations of one resource. */
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly refused = new Map<string, Remembered>();
  /** Slot inserts that lost to another creation (bench/limit-slots.ts reads it). */
  conflicts = 0;

  constructor(
    db: Db | undefined,
    private readonly clock: Clock,
    private readonly memoryMs: number,
    /** Off only to measure what it saves (bench/limit-slots.ts). */
    private readonly serialise = true,
  ) {
    this.slots = db?.collection<LimitSlotDoc>('limit_slots');
  }

  /**
   * Takes one of the account's `limit` slots for `holder`, then runs `create`; refused with 429
   * `quota_exceeded` when they are all held. The slot is given back when `create` throws.
   */
  async admit<T>(principal: Pick<Principal, 'accountId' | 'plan'>, limit: SlotLimit, holder: LimitHolder, create: () => Promise<T>): Promise<T> {
    return this.serialised(principal.accountId, limit, async () => {
      const allowed = principal.plan.limits[limit];
      const taken = await takeSlot(this.records(principal.accountId, limit), allowed, holder.id, (held) => this.gone(held, holder.states));
      if (!taken.ok) throw quotaExceeded(limit, allowed, holder.retryAfterSeconds);
      try {
        return await create();
      } catch (error) {
        await this.collection().deleteOne({ _id: slotId(principal.accountId, limit, taken.n), holder: holder.id }).catch(() => undefined);
        throw error;
      }
    });
  }

  /** `holder` of the account ended: its slot is free for every process, and this one forgets its refusal. */
  async release(principal: Pick<Principal, 'accountId' | 'plan'>, limit: SlotLimit, holder: string): Promise<void> {
    this.freed(principal.accountId, limit);
    const span = Math.max(principal.plan.limits[limit], RELEASE_SPAN);
    for (let from = 0; from < span; from += READ_CHUNK) {
      const { deletedCount } = await this.collection().deleteMany({ _id: { $in: slotIds(principal.accountId, limit, from, Math.min(span, from + READ_CHUNK)) }, holder });
      if (deletedCount > 0) return;
    }
  }

  /**
   * The holders of the account's `limit` slots (by key, as `release` reads them): every such thing the
   * account holds has one, so what is summed over them (an input's bytes) is read without a filter
   * other than the key.
   */
  async holders(principal: Pick<Principal, 'accountId' | 'plan'>, limit: SlotLimit): Promise<string[]> {
    const span = Math.max(principal.plan.limits[limit], RELEASE_SPAN);
    const held = await this.records(principal.accountId, limit).read(span);
    return held.map((holding) => holding.holder);
  }

  /**
   * Runs `create` after the account's earlier creations of `limit` in this process; a remembered
   * refusal (429 `quota_exceeded`) answers at once. For limits counted where they are stored.
   */
  private async serialised<T>(accountId: string, limit: CountedLimit, create: () => Promise<T>): Promise<T> {
    const key = `${accountId}|${limit}`;
    this.remembered(key);
    const previous = this.serialise ? (this.queues.get(key) ?? Promise.resolve()) : Promise.resolve();
    const run = previous.then(() => {
      // A refusal noted while this request waited answers it without another look.
      this.remembered(key);
      return create();
    });
    if (this.serialise) {
      const tail = run.then(
        () => undefined,
        () => undefined,
      );
      this.queues.set(key, tail);
      void tail.then(() => {
        if (this.queues.get(key) === tail) this.queues.delete(key);
      });
    }
    try {
      return await run;
    } catch (error) {
      if (error instanceof ApiError && error.code === 'quota_exceeded' && this.memoryMs > 0) {
        if (this.refused.size >= MAX_REMEMBERED) this.refused.clear();
        this.refused.set(key, { error, until: this.clock.now() + this.memoryMs });
      }
      throw error;
    }
  }

  /** The account gave back one of `limit`: its remembered refusal no longer holds. */
  freed(accountId: string, limit: CountedLimit): void {
    this.refused.delete(`${accountId}|${limit}`);
  }

  /** Throws the account's remembered refusal of `limit`, if any: for callers that would do work before `admit`. */
  refusedNow(accountId: string, limit: CountedLimit): void {
    this.remembered(`${accountId}|${limit}`);
  }

  private remembered(key: string): void {
    const remembered = this.refused.get(key);
    if (!remembered) return;
    if (remembered.until > this.clock.now()) throw remembered.error;
    this.refused.delete(key);
  }

  private collection(): Collection<LimitSlotDoc> {
    if (!this.slots) throw new Error('limit slots need a database');
    return this.slots;
  }

  private records(accountId: string, limit: SlotLimit): SlotRecords {
    const slots = this.collection();
    return {
      read: async (allowed) => {
        const held: Holding[] = [];
        for (let from = 0; from < allowed; from += READ_CHUNK) {
          const docs = await slots.find({ _id: { $in: slotIds(accountId, limit, from, Math.min(allowed, from + READ_CHUNK)) } }).toArray();
          for (const doc of docs) held.push({ n: Number(doc._id.slice(doc._id.lastIndexOf('|') + 1)), holder: doc.holder, at: doc.at.getTime() });
        }
        return held;
      },
      insert: async (n, holder) => {
        try {
          await slots.insertOne({ _id: slotId(accountId, limit, n), holder, account_id: accountId, limit, at: new Date(this.clock.now()) });
          return true;
        } catch (error) {
          if (!isDuplicateKey(error)) throw error;
          this.conflicts++;
          return false;
        }
      },
      remove: async (n, holder) => {
        await slots.deleteOne({ _id: slotId(accountId, limit, n), holder });
      },
    };
  }

  /** Holders that ended, or that have no record long after they took their slot. */
  private async gone(held: Holding[], states: HolderStates): Promise<Set<string>> {
    const known = await states(held.map((holding) => holding.holder));
    const now = this.clock.now();
    const gone = new Set<string>();
    for (const holding of held) {
      const state = known.get(holding.holder);
      if (state === 'ended' || (state === undefined && now - holding.at >= CREATION_GRACE_MS)) gone.add(holding.holder);
    }
    return gone;
  }
}
