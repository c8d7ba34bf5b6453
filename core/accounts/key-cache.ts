/**
 * API key look-ups, cached in the process for KEY_CACHE_TTL_MS. A change made through this process
 * (revoke, cap, plan, deletion, claim) drops the account's entries at once; a change made by another
 * process (another API replica, `npm run admin`) is seen here when the entry expires, at most that
 * long later.
 *
 * Keys that are not valid are remembered apart (the negative cache), so a flood of unknown keys never
 * pushes valid keys out; and a look-up made for a client network passes that network's limit of failed
 * look-ups first (auth-failures.ts), so well-formed random keys cannot reach the database at will.
 */
import type { AuthFailureLimiter } from './auth-failures';
import type { Clock } from '../../base/clock';
import { hashApiKey, sameDigest } from './keys';
import type { PlanCatalogue } from './plans';
import type { Principal } from './principal';
import type { AccountStore } from './store';

export type KeyRefusal = 'not_found' | 'revoked' | 'account_deleted';

export type KeyCheck =
  | { ok: true; principal: Principal; /** When the key expires by itself (epoch ms). */ validUntil?: number }
  | { ok: false; reason: KeyRefusal }
  /** Not looked up: the client's network failed too many look-ups lately. */
  | { ok: false; reason: 'throttled'; retryAfterSeconds: number };

interface CacheEntry {
  digest: string;
  check: KeyCheck;
  accountId: string | undefined;
  expires: number;
}

const MAX_ENTRIES = 10_000;
/** Unknown keys remembered at most; the oldest go first. */
const MAX_NEGATIVE = 10_000;
/** Digests of keys found valid that are remembered (32 bytes each and the Set's own: a few MB at most). */
const MAX_KNOWN = 100_000;

export class KeyCache {
  private readonly entries = new Map<string, CacheEntry>();
  /** Look-ups under way, so a burst of requests with one uncached key reads the database once. */
  private readonly pending = new Map<string, Promise<KeyCheck>>();
  /** Keys found not valid, apart from the valid ones. */
  private readonly negative = new Map<string, CacheEntry>();
  /**
   * Keys this process has found valid before (most recent last): when their entry expires, their next
   * look-up does not count against the client's network. Otherwise a flood of unknown keys from a
   * network (a shared NAT, a cloud region) would keep a real client of that network out.
   */
  private readonly known = new Set<string>();
  /** Bumped by `forget`: a look-up that started before a change must not be remembered after it. */
  private generation = 0;
  /** Database look-ups made, by what they found (for /metrics). */
  readonly lookUps = { valid: 0, refused: 0 };

  constructor(
    private readonly store: AccountStore,
    private readonly plans: PlanCatalogue,
    private readonly clock: Clock,
    private readonly ttlMs: number,
    private readonly failures?: AuthFailureLimiter,
  ) {}

  /**
   * Resolves a well-formed key to its principal, or says why it cannot be used. With `network` (the
   * client's, asked only when needed: cached keys are the hot path), a key that needs a database
   * look-up first passes that network's failure limit.
   */
  async check(key: string, options: { network?: () => string } = {}): Promise<KeyCheck> {
    const digest = hashApiKey(key);
    const now = this.clock.now();
    const cached = this.entries.get(digest) ?? this.negative.get(digest);
    // Found under its own digest: the entry's digest is this one (the look-up below compares the stored key's in constant time).
    if (cached && cached.expires > now) return cached.check;
    let lookUp = this.pending.get(digest);
    if (!lookUp) {
      const ticket = options.network !== undefined && this.failures && !this.known.has(digest) ? this.failures.take(options.network()) : undefined;
      if (ticket && !ticket.ok) return { ok: false, reason: 'throttled', retryAfterSeconds: ticket.retryAfterSeconds };
      const generation = this.generation;
      const started = this.lookUp(digest).then((check) => {
        if (check.ok) {
          this.lookUps.valid++;
          ticket?.refund();
          this.noteKnown(digest);
        } else {
          this.lookUps.refused++;
          this.known.delete(digest);
        }
        if (generation === this.generation) {
          this.remember({ digest, check, accountId: check.ok ? check.principal.accountId : undefined, expires: Math.min(now + this.ttlMs, (check.ok ? check.validUntil : undefined) ?? Infinity) });
        }
        return check;
      });
      // A look-up the database could not answer proved nothing against the network.
      started.catch(() => ticket?.refund());
      const done = () => {
        if (this.pending.get(digest) === started) this.pending.delete(digest);
      };
      void started.then(done, done);
      this.pending.set(digest, started);
      lookUp = started;
    }
    return lookUp;
  }

  /** Drops this process's cached look-ups of an account's keys (after any change to them). */
  forget(accountId: string): void {
    this.generation++;
    this.pending.clear();
    for (const [digest, entry] of this.entries) if (entry.accountId === accountId) this.entries.delete(digest);
  }

  private async lookUp(digest: string): Promise<KeyCheck> {
    const key = await this.store.keyByDigest(digest);
    if (!key || !sameDigest(key._id, digest)) return { ok: false, reason: 'not_found' };
    // An expired key (an OAuth access token past its hour) is refused as a revoked one.
    if (key.revoked_at || (key.expires_at && key.expires_at.getTime() <= this.clock.now())) return { ok: false, reason: 'revoked' };
    const account = await this.store.account(key.account_id);
    if (!account) return { ok: false, reason: 'not_found' };
    if (account.deleted_at) return { ok: false, reason: 'account_deleted' };
    return {
      ok: true,
      ...(key.expires_at ? { validUntil: key.expires_at.getTime() } : {}),
      principal: {
        accountId: account._id,
        keyId: key.key_id,
        plan: this.plans.resolve(account.plan, account.overrides ?? {}),
        keyCap: key.credit_cap ?? null,
        isAgent: account.is_agent,
        claimed: Boolean(account.claimed_at),
      },
    };
  }

  private noteKnown(digest: string): void {
    this.known.delete(digest);
    if (this.known.size >= MAX_KNOWN) {
      const oldest = this.known.values().next().value;
      if (oldest !== undefined) this.known.delete(oldest);
    }
    this.known.add(digest);
  }

  private remember(entry: CacheEntry): void {
    if (this.ttlMs === 0) return;
    if (!entry.check.ok) {
      // A rejected entry never outlives a real key (keys are random, an unknown one is never created later).
      this.negative.delete(entry.digest);
      if (this.negative.size >= MAX_NEGATIVE) {
        const oldest = this.negative.keys().next().value;
        if (oldest !== undefined) this.negative.delete(oldest);
      }
      this.negative.set(entry.digest, entry);
      return;
    }
    if (this.entries.size >= MAX_ENTRIES) {
      const now = this.clock.now();
      for (const [digest, old] of this.entries) if (old.expires <= now) this.entries.delete(digest);
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    }
    this.entries.set(entry.digest, entry);
  }
}
