/**
 * Request rate limits for routes that need no key or make the service act on demand
 * (`/oauth/register`, `/v1/webhook/test`, agent signup, OAuth client registrations): so many requests
 * per window per subject (a client network, an account), answered 429 with `Retry-After` beyond.
 *
 * Records are insert-only (`rate_limits`, one per admitted request, with its subject and window), so
 * every API process counts the same requests; two racing requests may both pass the last place, which
 * lets a subject exceed its limit by its requests in flight, never without bound. A refused subject is
 * remembered in the process until its window ends: a flood of refused requests costs no database work.
 * The first request of a window removes the subject's older records.
 */
import { randomUUID } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import type { IndexRegistration } from '../../base/db';
import { problem, secondsText } from '../../base/errors';

export const RATE_LIMIT_INDEXES: IndexRegistration = {
  rate_limits: [{ key: { subject: 1, window: 1 }, name: 'subject_window' }],
};

interface RateDoc {
  _id: string;
  subject: string;
  window: number;
  at: Date;
}

export type RateOutcome = { ok: true } | { ok: false; retryAfterSeconds: number };

const MAX_REMEMBERED = 10_000;

export class RateLimiter {
  private readonly records: Collection<RateDoc>;
  /** Subjects refused in this process, until the end of their window. */
  private readonly refused = new Map<string, number>();

  constructor(
    db: Db,
    private readonly now: () => number = Date.now,
  ) {
    this.records = db.collection<RateDoc>('rate_limits');
  }

  /** Counts a request of `subject` (`route|network` or `route|account`) against `limit` per `windowMs`. */
  async take(subject: string, limit: number, windowMs: number): Promise<RateOutcome> {
    const now = this.now();
    const window = Math.floor(now / windowMs);
    const retryAfterSeconds = Math.max(1, Math.ceil(((window + 1) * windowMs - now) / 1000));
    const until = this.refused.get(subject);
    if (until !== undefined && until > now) return { ok: false, retryAfterSeconds };
    const held = await this.records.countDocuments({ subject, window });
    if (held >= limit) {
      if (this.refused.size >= MAX_REMEMBERED) this.refused.clear();
      this.refused.set(subject, (window + 1) * windowMs);
      return { ok: false, retryAfterSeconds };
    }
    if (held === 0) await this.records.deleteMany({ subject, window: { $lt: window } });
    await this.records.insertOne({ _id: randomUUID(), subject, window, at: new Date(now) });
    return { ok: true };
  }

  /** Takes one request for each subject; the first refusal answers (the later subjects are not counted). */
  async takeAll(subjects: string[], limit: number, windowMs: number): Promise<RateOutcome> {
    for (const subject of subjects) {
      const outcome = await this.take(subject, limit, windowMs);
      if (!outcome.ok) return outcome;
    }
    return { ok: true };
  }
}

/**
 * Throws 429 `rate_limited` (with `Retry-After`) when the route's request from `network`, or from
 * `accountId` when the request has one, is over `limit` per `windowMs`.
 */
export async function checkRouteRate(limiter: RateLimiter, route: string, who: { network: string; accountId?: string }, limit: number, windowMs: number): Promise<void> {
  const subjects = [`${route}|net:${who.network}`, ...(who.accountId ? [`${route}|acc:${who.accountId}`] : [])];
  const outcome = await limiter.takeAll(subjects, limit, windowMs);
  if (!outcome.ok) {
    throw problem('rate_limited', `Too many requests to ${route} from this network or account; retry in ${secondsText(outcome.retryAfterSeconds)}.`, {
      headers: { 'Retry-After': String(outcome.retryAfterSeconds) },
    });
  }
}
