/**
 * Helpers the Fetch route wraps its work in: a concurrency slot for the request's duration, with the
 * `Concurrency-Limit` / `Concurrency-Remaining` headers clients read, and the cost headers.
 */
import type { Accounts, Principal } from '../../core/accounts';
import { problem } from '../../base/errors';
import type { HttpContext } from '../http/context';

/**
 * Runs `work` holding one of the account's concurrency slots. All in use: 429 AUTH008. The slot is
 * freed when `work` ends (however it ends) and as soon as the client disconnects, which also aborts
 * `signal` so the work can stop early. In steady state taking and freeing the slot touch no database
 * (core/accounts/slots.ts); only growing this process's claim on the account's slots is awaited.
 */
export async function withSlot<T>(
  ctx: HttpContext,
  accounts: Pick<Accounts, 'slots'>,
  principal: Principal,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const grant = await takeSlot(accounts, principal);
  ctx.set('Concurrency-Limit', String(grant.limit));
  ctx.set('Concurrency-Remaining', String(grant.remaining));
  const controller = new AbortController();
  const { res } = ctx;
  const onClose = () => {
    if (res.writableFinished) return;
    controller.abort(new Error('the client disconnected'));
    void grant.release();
  };
  res.once('close', onClose);
  if (res.destroyed) onClose();
  try {
    return await work(controller.signal);
  } finally {
    res.off('close', onClose);
    await grant.release();
  }
}

/** `withSlot` for callers that are not an HTTP response (MCP tools): `signal` says when the caller left. */
export async function withSlotUntil<T>(
  accounts: Pick<Accounts, 'slots'>,
  principal: Principal,
  signal: AbortSignal,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const grant = await takeSlot(accounts, principal);
  const onAbort = () => void grant.release();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await work(signal);
  } finally {
    signal.removeEventListener('abort', onAbort);
    await grant.release();
  }
}

/** One of the account's slots, or 429 AUTH008 when all are in use. */
async function takeSlot(accounts: Pick<Accounts, 'slots'>, principal: Principal): Promise<{ limit: number; remaining: number; release: () => Promise<void> }> {
  const limit = principal.plan.concurrency;
  const grant = await accounts.slots.acquire(principal.accountId, limit);
  if (!grant.ok) {
    throw problem('AUTH008', `All ${limit} concurrency slots of the plan are in use; retry when a request finishes.`, {
      headers: { 'Concurrency-Limit': String(limit), 'Concurrency-Remaining': '0', 'Retry-After': '1' },
    });
  }
  return { limit, remaining: Math.max(0, limit - grant.inUse), release: () => grant.lease.release() };
}

/** `X-Request-Cost` and `X-Request-Credits`: the credits charged for this request. */
export function setCostHeaders(ctx: HttpContext, credits: number): void {
  ctx.set('X-Request-Cost', String(credits));
  ctx.set('X-Request-Credits', String(credits));
}
