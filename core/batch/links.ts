/**
 * Capability links: the Batch clients fetch `result_url`, an export's `download_url` and an input's
 * upload URL without credentials, so each link is its own credential. A link names one thing (a
 * task's result in a run, an export, an input) and an expiry, and carries an HMAC-SHA256 of both
 * under a key derived from the server key: unguessable, bound to what it names, never the API key.
 *
 *   token = base64url(kind "." id "." expires) "." base64url(hmac)
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export type LinkKind = 'result' | 'export' | 'input';

export interface LinkClaim {
  kind: LinkKind;
  id: string;
  expiresAt: number;
}

export interface Links {
  sign(kind: LinkKind, id: string, expiresAt: number): string;
  /** The claim of a valid, unexpired token of `kind`, else undefined. */
  verify(token: string, kind: LinkKind, now?: number): LinkClaim | undefined;
}

export function createLinks(serverKey: Buffer | string): Links {
  const key = createHmac('sha256', serverKey).update('batch capability links v1').digest();
  const mac = (payload: string): Buffer => createHmac('sha256', key).update(payload).digest();
  return {
    sign(kind, id, expiresAt) {
      const payload = `${kind}.${id}.${Math.floor(expiresAt)}`;
      return `${Buffer.from(payload).toString('base64url')}.${mac(payload).toString('base64url')}`;
    },
    verify(token, kind, now = Date.now()) {
      const [encoded, signature, extra] = token.split('.');
      if (!encoded || !signature || extra !== undefined || token.length > 1024) return undefined;
      const payload = Buffer.from(encoded, 'base64url').toString();
      const given = Buffer.from(signature, 'base64url');
      // One spelling per link: base64url's unused low bits of the last character must be zero.
      if (given.toString('base64url') !== signature || Buffer.from(payload).toString('base64url') !== encoded) return undefined;
      const expected = mac(payload);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      const match = /^(result|export|input)\.(.+)\.(\d{1,15})$/.exec(payload);
      if (!match || match[1] !== kind) return undefined;
      const expiresAt = Number(match[3]);
      if (expiresAt <= now) return undefined;
      return { kind, id: match[2] as string, expiresAt };
    },
  };
}
