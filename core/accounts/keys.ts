/**
 * API keys: 40 random hexadecimal characters shown once, stored only as their SHA-256 (which is the
 * key document's `_id`, so a look-up is a point read on both engines) and compared in constant time.
 * Their look-ups are cached by key-cache.ts.
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

export const API_KEY_PATTERN = /^[0-9a-fA-F]{40}$/;

export const generateApiKey = (): string => randomBytes(20).toString('hex');

// The one-shot hash: no Hash object per call (it runs on every authenticated request).
export const hashApiKey = (key: string): string => hash('sha256', key.toLowerCase(), 'hex');

export const isWellFormedKey = (value: string): boolean => API_KEY_PATTERN.test(value);

/** Constant-time equality of two hex digests. */
export function sameDigest(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}
