import { createHash, randomBytes, randomUUID } from 'node:crypto';

/** A request id: a UUID, echoed in `X-Request-Id` and in `urn:service:request:<id>`. */
export const newRequestId = (): string => randomUUID();

/**
 * A prefixed, URL-safe, time-ordered id (`c_…` for crawls): 6 bytes of milliseconds then 10 random
 * bytes, base32 in lower case. Sorting ids sorts by creation time, which list endpoints rely on.
 */
export function newId(prefix: string, now: number = Date.now()): string {
  const bytes = Buffer.alloc(16);
  bytes.writeUIntBE(now, 0, 6);
  randomBytes(10).copy(bytes, 6);
  return `${prefix}_${base32(bytes)}`;
}

/** An id of the same shape as `newId`'s, the same for the same `seed`: retried work names what it made alike. */
export function derivedId(prefix: string, seed: string): string {
  return `${prefix}_${base32(createHash('sha256').update(seed).digest().subarray(0, 16))}`;
}

/** A `newId`-shaped id whose time is `now` and whose rest derives from `seed`: time-ordered, and the same when retried. */
export function derivedTimedId(prefix: string, now: number, seed: string): string {
  const bytes = Buffer.alloc(16);
  bytes.writeUIntBE(now, 0, 6);
  createHash('sha256').update(seed).digest().copy(bytes, 6, 0, 10);
  return `${prefix}_${base32(bytes)}`;
}

const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';

function base32(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}

const crockford = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * A ULID (26 characters of Crockford base32: 48 bits of milliseconds, 80 random bits), the shape the
 * Batch clients expect of HMAC key ids and webhook event ids.
 */
export function newUlid(now: number = Date.now()): string {
  let time = '';
  let rest = now;
  for (let index = 0; index < 10; index++) {
    time = crockford[rest % 32] + time;
    rest = Math.floor(rest / 32);
  }
  const random = randomBytes(16);
  let tail = '';
  for (let index = 0; index < 16; index++) tail += crockford[(random[index] ?? 0) % 32];
  return time + tail;
}

/**
 * A ULID-shaped id that is the same for the same `seed`: the time part from `at` (milliseconds), the
 * rest from the seed's hash. Work that may run twice (a retried activity) names its event alike.
 */
export function derivedUlid(at: number, seed: string): string {
  let time = '';
  let rest = Math.max(0, Math.floor(at));
  for (let index = 0; index < 10; index++) {
    time = crockford[rest % 32] + time;
    rest = Math.floor(rest / 32);
  }
  const hash = createHash('sha256').update(seed).digest();
  let tail = '';
  for (let index = 0; index < 16; index++) tail += crockford[(hash[index] ?? 0) % 32];
  return time + tail;
}
