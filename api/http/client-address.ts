/** Where a request comes from, for the per-network limits (signups, OAuth registration, failed key look-ups). */
import { isIP } from 'node:net';
import type { HttpContext } from './context';

/** The client's address: `X-Forwarded-For`'s first entry behind a trusted proxy (TRUST_PROXY), else the socket's. */
export function clientAddress(ctx: Pick<HttpContext, 'get' | 'req'>, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = ctx.get('X-Forwarded-For').split(',')[0]?.trim() ?? '';
    if (isIP(forwarded)) return forwarded;
  }
  return ctx.req.socket.remoteAddress ?? 'unknown';
}
