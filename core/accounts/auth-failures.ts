/**
 * Failed key look-ups, limited per client network (IPv4 /24, IPv6 /64) and decided in memory before
 * the database is asked. A key in no cache costs a database look-up, and well-formed random keys are
 * never in one: without this, a flood of them reached the database once each and went past every
 * budget (the request budget belongs to an account, and they have none).
 *
 * Each network has a bucket of `burst` look-ups refilling at `perMinute`: a look-up of an uncached
 * key takes one, and gives it back when the key turns out valid, so only failures wear the bucket
 * down; an empty bucket refuses uncached keys (429 with Retry-After) until it refills. Cached keys,
 * valid or not, never come here. Each live API process (api-processes.ts) takes its share of the
 * bucket (burst and refill ÷ live processes), so the limit holds across processes; the networks kept
 * are bounded (a full bucket carries nothing and is forgotten first).
 */
import type { Clock } from '../../base/clock';

export interface AuthFailureLimits {
  burst: number;
  perMinute: number;
}

export type LookUpTicket = { ok: true; refund(): void } | { ok: false; retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  at: number;
}

const MAX_NETWORKS = 10_000;

export class AuthFailureLimiter {
  private readonly buckets = new Map<string, Bucket>();
  /** Look-ups refused so far (for /metrics). */
  refused = 0;

  constructor(
    private readonly clock: Clock,
    private readonly configured: AuthFailureLimits,
    /** Live API processes sharing the limit (api-processes.ts). */
    private readonly processes: () => number = () => 1,
  ) {}

  /** This process's share. */
  private get limits(): AuthFailureLimits {
    const n = Math.max(1, this.processes());
    return n === 1 ? this.configured : { burst: Math.max(1, Math.floor(this.configured.burst / n)), perMinute: this.configured.perMinute / n };
  }

  /** A look-up for `network`, or how long until it may look one up again. */
  take(network: string): LookUpTicket {
    const now = this.clock.now();
    const bucket = this.refilled(network, now);
    if (bucket.tokens < 1) {
      this.refused++;
      const perMs = this.limits.perMinute / 60_000;
      const retryAfterSeconds = perMs > 0 ? Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000)) : 60;
      return { ok: false, retryAfterSeconds };
    }
    bucket.tokens -= 1;
    let refunded = false;
    return {
      ok: true,
      refund: () => {
        if (refunded) return;
        refunded = true;
        const current = this.refilled(network, this.clock.now());
        current.tokens = Math.min(this.limits.burst, current.tokens + 1);
      },
    };
  }

  private refilled(network: string, now: number): Bucket {
    let bucket = this.buckets.get(network);
    if (bucket) {
      bucket.tokens = Math.min(this.limits.burst, bucket.tokens + ((now - bucket.at) * this.limits.perMinute) / 60_000);
      bucket.at = now;
      // Most recently used last, so the oldest are forgotten first.
      this.buckets.delete(network);
    } else {
      bucket = { tokens: this.limits.burst, at: now };
      if (this.buckets.size >= MAX_NETWORKS) this.forget(now);
    }
    this.buckets.set(network, bucket);
    return bucket;
  }

  /** Forgets full buckets (they carry nothing), then the least recently used. */
  private forget(now: number): void {
    for (const [network, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.at) * this.limits.perMinute) / 60_000 >= this.limits.burst) this.buckets.delete(network);
    }
    for (const network of this.buckets.keys()) {
      if (this.buckets.size < MAX_NETWORKS) break;
      this.buckets.delete(network);
    }
  }
}
