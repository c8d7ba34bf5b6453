/**
 * Where the installation-wide host gate (engine/politeness/gate.ts) keeps what every API and worker
 * process must see, written so that FerretDB's lack of transactions and of atomic updates does no harm:
 *
 * - `host_slots`: one document per request start of a rate-limited host, keyed by host, interval and
 *   slot number. Insert-only: the unique `_id` lets exactly one request take a slot, whichever process
 *   it runs in. Old slots are deleted by their `expires_at`.
 * - `host_leases`: one document per request in flight at a governed host, `_id` host and lease number
 *   (at most the host's concurrency of them), deleted by its holder (by `_id` and token) or once it
 *   expires; the holder renews it while it lasts.
 * - `host_turns`: the requests waiting for a governed host's lease (`w|host|token`: account, since,
 *   renewed while it waits) and when each account last got one (`s|host|account`), each with an
 *   `expires_at` past which it no longer counts; read by host in one query.
 * - `host_state`: a host's back-off (`b|host`: until when, how many times in a row) and its robots.txt
 *   `Crawl-delay` (`d|host`). Each replaced whole; two writers racing leave one of two equally valid
 *   pauses, never none.
 */
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey, type IndexRegistration } from '../../base/db';
import type { HostGateStore, HostState, HostTurns, HostWaiter } from '../../engine';

export interface SlotDoc {
  _id: string;
  /** When the slot's request starts (its interval's start, or later). */
  at: Date;
  expires_at: Date;
}

export interface LeaseDoc {
  _id: string;
  token: string;
  expires_at: Date;
}

export interface HostStateDoc {
  _id: string;
  host: string;
  kind: 'backoff' | 'delay';
  until: Date;
  /** Back-off: 429/503 answers in a row (the pause doubles with each). */
  level?: number;
  /** Crawl delay, milliseconds. */
  ms?: number;
  /** Back-off: the status that started it. */
  status?: number;
  updated_at: Date;
}

export interface TurnDoc {
  _id: string;
  host: string;
  kind: 'waiter' | 'served';
  account: string;
  /** A waiter: since when it waits; served: when the account got a lease. */
  at: Date;
  expires_at: Date;
}

export const POLITENESS_INDEXES: IndexRegistration = {
  host_slots: [{ key: { expires_at: 1 }, name: 'expires_at' }],
  host_turns: [
    { key: { host: 1 }, name: 'host' },
    { key: { expires_at: 1 }, name: 'expires_at' },
  ],
  host_leases: [{ key: { expires_at: 1 }, name: 'expires_at' }],
  host_state: [{ key: { kind: 1, until: 1 }, name: 'kind_until' }],
};

export interface PolitenessCollections {
  slots: Collection<SlotDoc>;
  leases: Collection<LeaseDoc>;
  state: Collection<HostStateDoc>;
  turns: Collection<TurnDoc>;
}

export function politenessCollections(db: Db): PolitenessCollections {
  return {
    slots: db.collection<SlotDoc>('host_slots'),
    leases: db.collection<LeaseDoc>('host_leases'),
    state: db.collection<HostStateDoc>('host_state'),
    turns: db.collection<TurnDoc>('host_turns'),
  };
}

export const stateIds = {
  backoff: (host: string): string => `b|${host}`,
  delay: (host: string): string => `d|${host}`,
};

/** The host gate's store (engine/politeness/store.ts) on these four collections. */
export class MongoHostGateStore implements HostGateStore {
  private readonly collections: PolitenessCollections;

  constructor(db: Db) {
    this.collections = politenessCollections(db);
  }

  async readState(host: string): Promise<HostState> {
    const docs = await this.collections.state.find({ _id: { $in: [stateIds.backoff(host), stateIds.delay(host)] } }).toArray();
    const backoff = docs.find((doc) => doc.kind === 'backoff');
    const delay = docs.find((doc) => doc.kind === 'delay');
    return {
      ...(backoff ? { backoff: { until: backoff.until.getTime(), level: backoff.level ?? 0 } } : {}),
      ...(delay ? { delay: { until: delay.until.getTime(), ms: delay.ms ?? 0 } } : {}),
    };
  }

  async writeBackoff(host: string, backoff: { until: number; level: number; status: number }, now: number): Promise<void> {
    const doc: HostStateDoc = { _id: stateIds.backoff(host), host, kind: 'backoff', until: new Date(backoff.until), level: backoff.level, status: backoff.status, updated_at: new Date(now) };
    await this.collections.state.replaceOne({ _id: doc._id }, doc, { upsert: true });
  }

  async stepBackoff(host: string, level: number, now: number): Promise<void> {
    if (level === 0) await this.collections.state.deleteOne({ _id: stateIds.backoff(host) });
    else await this.collections.state.updateOne({ _id: stateIds.backoff(host) }, { $set: { level, updated_at: new Date(now) } });
  }

  async writeDelay(host: string, delay: { ms: number; until: number }, now: number): Promise<void> {
    const doc: HostStateDoc = { _id: stateIds.delay(host), host, kind: 'delay', until: new Date(delay.until), ms: delay.ms, updated_at: new Date(now) };
    await this.collections.state.replaceOne({ _id: doc._id }, doc, { upsert: true });
  }

  async takeSlot(id: string, at: number, expiresAt: number): Promise<boolean> {
    return insertedOnce(this.collections.slots.insertOne({ _id: id, at: new Date(at), expires_at: new Date(expiresAt) }));
  }

  async slotStart(id: string): Promise<number | undefined> {
    const doc = await this.collections.slots.findOne({ _id: id });
    return doc?.at?.getTime();
  }

  async lastSlot(prefix: string): Promise<string | undefined> {
    const last = await this.collections.slots.find({ _id: { $gt: prefix, $lt: `${prefix}~` } }).sort({ _id: -1 }).limit(1).toArray();
    return last[0]?._id;
  }

  async sweepSlots(now: number): Promise<void> {
    await this.collections.slots.deleteMany({ expires_at: { $lt: new Date(now) } });
  }

  async takeLease(id: string, token: string, expiresAt: number): Promise<boolean> {
    return insertedOnce(this.collections.leases.insertOne({ _id: id, token, expires_at: new Date(expiresAt) }));
  }

  async renewLease(id: string, token: string, expiresAt: number): Promise<void> {
    await this.collections.leases.updateOne({ _id: id, token }, { $set: { expires_at: new Date(expiresAt) } });
  }

  async releaseLease(id: string, token: string): Promise<void> {
    await this.collections.leases.deleteOne({ _id: id, token });
  }

  async expireLeases(ids: readonly string[], now: number): Promise<void> {
    await this.collections.leases.deleteMany({ _id: { $in: [...ids] }, expires_at: { $lt: new Date(now) } });
  }

  async announceWaiter(host: string, token: string, waiter: HostWaiter, expiresAt: number): Promise<void> {
    const doc: TurnDoc = { _id: `w|${host}|${token}`, host, kind: 'waiter', account: waiter.account, at: new Date(waiter.since), expires_at: new Date(expiresAt) };
    await this.collections.turns.replaceOne({ _id: doc._id }, doc, { upsert: true });
  }

  async withdrawWaiter(host: string, token: string): Promise<void> {
    await this.collections.turns.deleteOne({ _id: `w|${host}|${token}` });
  }

  async turns(host: string, now: number): Promise<HostTurns> {
    const docs = await this.collections.turns.find({ host, expires_at: { $gt: new Date(now) } }).toArray();
    const waiting: HostWaiter[] = [];
    const served = new Map<string, number>();
    for (const doc of docs) {
      if (doc.kind === 'waiter') waiting.push({ account: doc.account, since: doc.at.getTime() });
      else served.set(doc.account, Math.max(served.get(doc.account) ?? 0, doc.at.getTime()));
    }
    return { waiting, served };
  }

  async markServed(host: string, account: string, at: number, expiresAt: number): Promise<void> {
    const doc: TurnDoc = { _id: `s|${host}|${account}`, host, kind: 'served', account, at: new Date(at), expires_at: new Date(expiresAt) };
    await this.collections.turns.replaceOne({ _id: doc._id }, doc, { upsert: true });
  }

  async sweepTurns(now: number): Promise<void> {
    await this.collections.turns.deleteMany({ expires_at: { $lt: new Date(now) } });
  }
}

/** True when the insert landed, false when the unique key was taken. */
async function insertedOnce(insert: Promise<unknown>): Promise<boolean> {
  try {
    await insert;
    return true;
  } catch (error) {
    if (isDuplicateKey(error)) return false;
    throw error;
  }
}
