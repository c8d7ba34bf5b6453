/**
 * `Idempotency-Key` on the starts of jobs (crawls, Batch jobs, Extract preparations). A key is
 * claimed by inserting its document (the unique `_id` makes one request the owner), then completed
 * with the job it started, or dropped when the request
 * was refused (a refused request starts nothing, so its retry may try again). A claim whose owner died
 * (never completed nor dropped) is taken over after STALE_CLAIM_MS. Keys are kept for a day.
 */
import { createHash } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from '../db';

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
const STALE_CLAIM_MS = 2 * 60 * 1000;
const KEEP_MS = 24 * 60 * 60 * 1000;

export interface IdempotencyDoc {
  _id: string;
  body: string;
  state: 'pending' | 'done';
  result_id: string | null;
  /** Random token of the claiming request. */
  owner: string;
  created_at: Date;
}

export type Claim =
  | { kind: 'claimed'; complete(resultId: string): Promise<void>; drop(): Promise<void> }
  | { kind: 'replay'; resultId: string }
  | { kind: 'in_flight' }
  | { kind: 'reused' };

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

export class IdempotencyKeys {
  private readonly keys: Collection<IdempotencyDoc>;

  constructor(
    db: Db,
    private readonly surface: string,
    private readonly now: () => number = Date.now,
  ) {
    this.keys = db.collection<IdempotencyDoc>('idempotency_keys');
  }

  async claim(accountId: string, key: string, body: unknown): Promise<Claim> {
    const id = `${this.surface}|${accountId}|${digest(key)}`;
    const bodyDigest = digest(canonicalJson(body));
    for (let attempt = 0; attempt < 5; attempt++) {
      const owner = digest(`${id}|${Math.random()}|${this.now()}`);
      try {
        await this.keys.insertOne({ _id: id, body: bodyDigest, state: 'pending', result_id: null, owner, created_at: new Date(this.now()) });
        return {
          kind: 'claimed',
          complete: async (resultId) => {
            await this.keys.updateOne({ _id: id, owner }, { $set: { state: 'done', result_id: resultId } });
          },
          drop: async () => {
            await this.keys.deleteOne({ _id: id, owner });
          },
        };
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
      }
      const existing = await this.keys.findOne({ _id: id });
      if (!existing) continue;
      const age = this.now() - existing.created_at.getTime();
      const stale = (existing.state === 'pending' && age > STALE_CLAIM_MS) || age > KEEP_MS;
      if (stale) {
        await this.keys.deleteOne({ _id: id, owner: existing.owner });
        continue;
      }
      if (existing.body !== bodyDigest) return { kind: 'reused' };
      if (existing.state === 'pending' || !existing.result_id) return { kind: 'in_flight' };
      return { kind: 'replay', resultId: existing.result_id };
    }
    return { kind: 'in_flight' };
  }
}
