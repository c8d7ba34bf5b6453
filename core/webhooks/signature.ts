/**
 * Webhook signatures: `X-Signature: t=<unix seconds>,v1=<lowercase hex>,kid=<kid>`, where `v1` is
 * HMAC-SHA256, keyed with the base64-decoded secret, over `<t>.` followed by the exact bytes sent.
 * Receivers verify the raw bytes they received (never re-serialized JSON) and reject old timestamps.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Signature';
export const EVENT_ID_HEADER = 'X-Service-Event-Id';
/** Largest gap between a signature's timestamp and the receiver's clock the reference receiver accepts. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export interface SigningKey {
  kid: string;
  /** The raw key bytes (the base64 secret, decoded). */
  secret: Buffer;
}

const digest = (secret: Buffer, timestamp: number, body: Buffer): string =>
  createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');

export function signatureHeader(key: SigningKey, body: Buffer, unixSeconds: number): string {
  const timestamp = Math.floor(unixSeconds);
  return `t=${timestamp},v1=${digest(key.secret, timestamp, body)},kid=${key.kid}`;
}

/** What a receiver does: true when `header` signs `body` with one of `secrets` (kid → key bytes). */
export function verifySignature(
  header: string,
  body: Buffer,
  secrets: ReadonlyMap<string, Buffer>,
  nowSeconds: number,
  toleranceSeconds = SIGNATURE_TOLERANCE_SECONDS,
): boolean {
  const parts = new Map<string, string>();
  for (const item of header.split(',')) {
    const at = item.indexOf('=');
    if (at > 0) parts.set(item.slice(0, at).trim(), item.slice(at + 1).trim());
  }
  const t = parts.get('t');
  const v1 = parts.get('v1');
  const kid = parts.get('kid');
  if (!t || !v1 || !kid || !/^\d{1,12}$/.test(t) || !/^[0-9a-f]{64}$/i.test(v1)) return false;
  const secret = secrets.get(kid);
  if (!secret || secret.length === 0) return false;
  if (Math.abs(nowSeconds - Number(t)) > toleranceSeconds) return false;
  const expected = Buffer.from(digest(secret, Number(t), body), 'hex');
  return timingSafeEqual(expected, Buffer.from(v1.toLowerCase(), 'hex'));
}
