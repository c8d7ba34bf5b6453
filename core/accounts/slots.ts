/**
 * Concurrency slots: an account on a plan with N slots runs at most N Fetch requests at once, across
 * every API process. A slot is a lease document whose `slot` value (`<account>:<0..N-1>`) is unique,
 * so taking a slot is one insert that only one process can win. The lease is deleted when the request
 * ends or its client disconnects; it carries `expires_at`, which the holding process pushes forward
 * every third of SLOT_LEASE_MS while the request runs. A process that dies stops renewing, and the next
 * acquire for that account (in any process) deletes its expired leases: FerretDB has no TTL indexes, so
 * expiry is checked where it matters. Leases are only ever deleted by their own `_id` (never reused),
 * so a late delete can never remove a newer lease on the same slot.
 *
 * On FerretDB the account's leases are read with a collection scan (it pushes down only `_id`
 * filters); the collection holds only leases in use, so it stays small. On MongoDB it is an index read.
 */
import type { Collection } from 'mongodb';
import { newId } from '../ids';
import type { Logger } from '../log';
import type { Clock } from './clock';

export interface LeaseDoc {
  _id: string;
  slot: string;
  account_id: string;
  /** The API process holding it. */
  instance: string;
  acquired_at: Date;
  /** Epoch ms after which any process may reclaim the slot. */
  expires_at: number;
}

export interface Lease {
  id: string;
  accountId: string;
  /** Frees the slot; safe to call more than once. */
  release(): Promise<void>;
}

export type SlotGrant = { ok: true; lease: Lease; limit: number; inUse: number } | { ok: false; limit: number; inUse: number };

const isDuplicateKey = (error: unknown): boolean => (error as { code?: unknown }).code === 11000;
const MAX_ATTEMPTS = 8;

export class SlotPool {
  /** Identifies this process's leases. */
  readonly instance = newId('api');
  private readonly held = new Map<string, LeaseDoc>();
  private readonly turns = new Map<string, Promise<unknown>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly leases: Collection<LeaseDoc>,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly leaseMs: number,
  ) {}

  /** Takes one of the account's `limit` slots, or says that all are in use. */
  acquire(accountId: string, limit: number): Promise<SlotGrant> {
    // One acquire per account at a time in this process: they would only collide with each other.
    const previous = this.turns.get(accountId) ?? Promise.resolve();
    const turn = previous.then(() => this.tryAcquire(accountId, limit));
    const settled = turn.catch(() => undefined);
    this.turns.set(accountId, settled);
    void settled.then(() => {
      if (this.turns.get(accountId) === settled) this.turns.delete(accountId);
    });
    return turn;
  }

  /** Slots of the account in use now (expired leases not counted). */
  async inUse(accountId: string): Promise<number> {
    const now = this.clock.now();
    const leases = await this.leases.find({ account_id: accountId }, { projection: { expires_at: 1 } }).toArray();
    return leases.filter((lease) => lease.expires_at > now).length;
  }

  private async tryAcquire(accountId: string, limit: number): Promise<SlotGrant> {
    let inUse = 0;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const now = this.clock.now();
      const leases = await this.leases.find({ account_id: accountId }).toArray();
      const live = leases.filter((lease) => lease.expires_at > now);
      const expired = leases.filter((lease) => lease.expires_at <= now);
      if (expired.length > 0) {
        await Promise.all(expired.map((lease) => this.leases.deleteOne({ _id: lease._id })));
        this.log.info('reclaimed expired concurrency slots', { account_id: accountId, count: expired.length });
      }
      inUse = live.length;
      if (inUse >= limit) return { ok: false, limit, inUse };
      const taken = new Set(live.map((lease) => lease.slot));
      const slot = Array.from({ length: limit }, (_, n) => `${accountId}:${n}`).find((name) => !taken.has(name)) as string;
      const doc: LeaseDoc = {
        _id: newId('lease', now),
        slot,
        account_id: accountId,
        instance: this.instance,
        acquired_at: new Date(now),
        expires_at: now + this.leaseMs,
      };
      try {
        await this.leases.insertOne(doc);
      } catch (error) {
        if (isDuplicateKey(error)) continue; // another process took it first, or an expired lease is not gone yet
        throw error;
      }
      this.held.set(doc._id, doc);
      return { ok: true, lease: { id: doc._id, accountId, release: () => this.release(doc._id) }, limit, inUse: inUse + 1 };
    }
    return { ok: false, limit, inUse };
  }

  private async release(leaseId: string): Promise<void> {
    if (!this.held.delete(leaseId)) return;
    try {
      await this.leases.deleteOne({ _id: leaseId });
    } catch (error) {
      this.log.warn('could not free a concurrency slot; it frees itself when its lease expires', { lease: leaseId, error });
    }
  }

  /** Starts renewing this process's leases. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.renew(), Math.max(250, Math.floor(this.leaseMs / 3)));
    this.timer.unref();
  }

  /** Pushes the expiry of every lease this process holds; a lease reclaimed meanwhile is given up. */
  async renew(): Promise<void> {
    const expires = this.clock.now() + this.leaseMs;
    await Promise.all(
      [...this.held.keys()].map(async (id) => {
        try {
          const result = await this.leases.updateOne({ _id: id }, { $set: { expires_at: expires } });
          if (result.matchedCount === 0 && this.held.delete(id)) {
            this.log.warn('a concurrency slot lease expired before it was renewed', { lease: id });
          }
        } catch (error) {
          this.log.warn('could not renew a concurrency slot lease', { lease: id, error });
        }
      }),
    );
  }

  /** Frees every slot this process holds and stops renewing (graceful shutdown). */
  async stop(): Promise<void> {
    this.abandon();
    const ids = [...this.held.keys()];
    this.held.clear();
    await Promise.all(ids.map((id) => this.leases.deleteOne({ _id: id }).catch(() => undefined)));
  }

  /** Stops renewing without freeing anything: what a crashed process does (tests use it). */
  abandon(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
