/**
 * `Idempotency-Key` on the starts of jobs (crawls, Batch jobs and reruns, Extract preparations). A key
 * is claimed by inserting its document (the unique `_id` makes one request the owner), then completed
 * with the record it started, or dropped when the request was refused or could not start (nothing was
 * started, so its retry may try again). Keys are kept for a day.
 *
 * The claim reserves the id of the record it will start (`reserved_id`), so a start is the same
 * whoever finishes it. Its owner marks it alive while it works (`alive_at`); a claim whose owner has
 * not done so for ALIVE_MS died with its request (a killed API), and the next request with the same
 * key and body takes it over at once and finishes the start under the reserved id: the record insert,
 * the active-job slot and the workflow start are each harmless to repeat, so it converges on the one
 * record the dead request began, never a second.
 */
import { createHash } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from '../../base/db';

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** An owner that has not marked its claim alive for this long has died. */
export const CLAIM_ALIVE_MS = 10_000;
const BEAT_MS = CLAIM_ALIVE_MS / 4;
/** A request never works on a start for longer: the beat stops (and the claim can be taken over) after it. */
const MAX_BEATING_MS = 10 * 60 * 1000;
const KEEP_MS = 24 * 60 * 60 * 1000;

export const IDEMPOTENCY_KEYS = 'idempotency_keys';

export interface IdempotencyDoc {
  _id: string;
  body: string;
  state: 'pending' | 'done';
  result_id: string | null;
  /** The id the claimed request gives the record it starts. */
  reserved_id?: string | null;
  /** Random token of the claiming request (a takeover replaces it). */
  owner: string;
  created_at: Date;
  /** Last time the owner said it still works on the claim. */
  alive_at?: Date;
}

export interface Claimed {
  kind: 'claimed';
  /** The key document's id (a start names the claim it answers). */
  id: string;
  /** The reserved record id (the dead owner's, when `takenOver`), if the caller asked for one. */
  recordId: string;
  /** This request took over the claim of a request that died: its record may exist already. */
  takenOver: boolean;
  complete(resultId: string): Promise<void>;
  drop(): Promise<void>;
  /** Whether this request still owns the claim (a takeover by a retry ends that). */
  owned(): Promise<boolean>;
}

export type Claim = Claimed | { kind: 'replay'; resultId: string } | { kind: 'in_flight' } | { kind: 'reused' };

/** Canonical JSON (object keys sorted), so the same body in another key order is the same body. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const digest = (text: string): string => createHash('sha256').update(text).digest('base64url');

/** Whether the owner of a pending claim still works on it at `now`. */
export const ownerAlive = (doc: Pick<IdempotencyDoc, 'alive_at' | 'created_at'>, now: number): boolean => now - (doc.alive_at ?? doc.created_at).getTime() < CLAIM_ALIVE_MS;

export class IdempotencyKeys {
  private readonly keys: Collection<IdempotencyDoc>;

  constructor(
    db: Db,
    private readonly surface: string,
    private readonly now: () => number = Date.now,
  ) {
    this.keys = db.collection<IdempotencyDoc>(IDEMPOTENCY_KEYS);
  }

  /** Claims `key` for `body`; `reserve` names the record a new claim will start. */
  async claim(accountId: string, key: string, body: unknown, reserve: () => string = () => ''): Promise<Claim> {
    const id = `${this.surface}|${accountId}|${digest(key)}`;
    const bodyDigest = digest(canonicalJson(body));
    for (let attempt = 0; attempt < 5; attempt++) {
      const owner = digest(`${id}|${Math.random()}|${this.now()}`);
      const at = new Date(this.now());
      const reserved = reserve();
      try {
        await this.keys.insertOne({ _id: id, body: bodyDigest, state: 'pending', result_id: null, reserved_id: reserved || null, owner, created_at: at, alive_at: at });
        return this.claimed(id, owner, reserved, false);
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
      }
      const existing = await this.keys.findOne({ _id: id });
      if (!existing) continue;
      if (this.now() - existing.created_at.getTime() > KEEP_MS) {
        await this.keys.deleteOne({ _id: id, owner: existing.owner });
        continue;
      }
      if (existing.body !== bodyDigest) return { kind: 'reused' };
      if (existing.state === 'done' && existing.result_id) return { kind: 'replay', resultId: existing.result_id };
      if (existing.state === 'done' || ownerAlive(existing, this.now())) return { kind: 'in_flight' };
      // Its owner died: take the claim over (compare-and-set on the owner; one retry wins).
      const taken = await this.keys.updateOne({ _id: id, owner: existing.owner, state: 'pending' }, { $set: { owner, alive_at: at } });
      if (taken.modifiedCount === 0) continue;
      const mine = await this.keys.findOne({ _id: id });
      if (mine?.owner !== owner) continue;
      return this.claimed(id, owner, existing.reserved_id || reserved, true);
    }
    return { kind: 'in_flight' };
  }

  private claimed(id: string, owner: string, recordId: string, takenOver: boolean): Claimed {
    const started = this.now();
    // The owner beats while it works, so a retry can tell a slow start from a dead one.
    const beat = setInterval(() => {
      if (this.now() - started > MAX_BEATING_MS) return clearInterval(beat);
      this.keys.updateOne({ _id: id, owner, state: 'pending' }, { $set: { alive_at: new Date(this.now()) } }).catch(() => undefined);
    }, BEAT_MS);
    beat.unref();
    return {
      kind: 'claimed',
      id,
      recordId,
      takenOver,
      complete: async (resultId) => {
        clearInterval(beat);
        await this.keys.updateOne({ _id: id, owner }, { $set: { state: 'done', result_id: resultId } });
      },
      drop: async () => {
        clearInterval(beat);
        await this.keys.deleteOne({ _id: id, owner });
      },
      owned: async () => (await this.keys.findOne({ _id: id }, { projection: { owner: 1 } }))?.owner === owner,
    };
  }
}
