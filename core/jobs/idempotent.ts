/**
 * One way to honour `Idempotency-Key` on a start: check the key, claim it, run the start under the
 * claim, complete it with the record started, or give it back when the start failed (its retry may
 * try again), and answer a completed key's record again. Refusals are said in one internal vocabulary
 * that each surface maps to the codes its clients know (`IdempotencyWords`).
 */
import type { ApiError } from '../../base/errors';
import { MAX_IDEMPOTENCY_KEY_LENGTH, type Claimed, type IdempotencyKeys } from './idempotency';

/** Why a keyed request is refused: a malformed key, a key used with another body, a key whose first request still runs. */
export type IdempotencyRefusal = 'invalid_key' | 'reused' | 'in_flight';

/** A surface's words for the refusals, as its clients branch on them. */
export type IdempotencyWords = (refusal: IdempotencyRefusal) => ApiError;

/** The key as sent, checked: undefined when the request carries none. */
export function checkIdempotencyKey(key: string | undefined, words: IdempotencyWords): string | undefined {
  if (key === undefined) return undefined;
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) throw words('invalid_key');
  return key;
}

export interface KeyedRequest {
  accountId: string;
  key: string | undefined;
  /** Prefixes the key where one key may start several kinds of record (a job's reruns, its additions). */
  scope?: string;
  /** What the key promises: the same key with another body is refused. */
  body: unknown;
  /** Names the record a new claim will start (so whoever finishes the start uses the same id). */
  reserve?: () => string;
}

export interface KeyedStart<T> {
  /** The record a completed key started, answered again; undefined when it is gone (the start runs again). */
  replay(resultId: string): Promise<T | undefined>;
  /** The start itself, under `claim` (undefined without a key): its value and the id the key records. */
  run(claim: Claimed | undefined): Promise<{ value: T; resultId: string }>;
}

export async function idempotent<T>(keys: IdempotencyKeys, words: IdempotencyWords, request: KeyedRequest, start: KeyedStart<T>): Promise<{ value: T; replayed: boolean }> {
  const key = checkIdempotencyKey(request.key, words);
  if (key === undefined) return { value: (await start.run(undefined)).value, replayed: false };
  const claim = await keys.claim(request.accountId, request.scope ? `${request.scope}:${key}` : key, request.body, request.reserve);
  if (claim.kind === 'replay') {
    const value = await start.replay(claim.resultId);
    return value === undefined ? { value: (await start.run(undefined)).value, replayed: false } : { value, replayed: true };
  }
  if (claim.kind === 'reused' || claim.kind === 'in_flight') throw words(claim.kind);
  try {
    const { value, resultId } = await start.run(claim);
    await claim.complete(resultId);
    return { value, replayed: false };
  } catch (error) {
    // Given back only while still this request's: a retry that took it over finishes the start.
    if (await claim.owned().catch(() => false)) await claim.drop().catch(() => undefined);
    throw error;
  }
}
