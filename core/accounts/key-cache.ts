/**
 * API key look-ups, cached in the process for KEY_CACHE_TTL_MS. A change made through this process
 * (revoke, cap, plan, deletion, claim) drops the account's entries at once; a change made by another
 * process (another API replica, `npm run admin`) is seen here when the entry expires, at most that
 * long later.
 */
import type { Clock } from '../../base/clock';
import { hashApiKey, sameDigest } from './keys';
import type { PlanCatalogue } from './plans';
import type { Principal } from './principal';
import type { AccountStore } from './store';

export type KeyCheck = { ok: true; principal: Principal; /** When the key expires by itself (epoch ms). */ validUntil?: number } | { ok: false; reason: 'not_found' | 'revoked' | 'account_deleted' };

interface CacheEntry {
  digest: string;
  check: KeyCheck;
  accountId: string | undefined;
  expires: number;
}

const MAX_ENTRIES = 10_000;

export class KeyCache {
  private readonly entries = new Map<string, CacheEntry>();
  /** Look-ups under way, so a burst of requests with one uncached key reads the database once. */
  private readonly pending = new Map<string, Promise<KeyCheck>>();
  /** Bumped by `forget`: a look-up that started before a change must not be remembered after it. */
  private generation = 0;

  constructor(
    private readonly store: AccountStore,
    private readonly plans: PlanCatalogue,
    private readonly clock: Clock,
    private readonly ttlMs: number,
  ) {}

  /** Resolves a well-formed key to its principal, or says why it cannot be used. */
  async check(key: string): Promise<KeyCheck> {
    const digest = hashApiKey(key);
    const now = this.clock.now();
    const cached = this.entries.get(digest);
    if (cached && cached.expires > now && sameDigest(cached.digest, digest)) return cached.check;
    let lookUp = this.pending.get(digest);
    if (!lookUp) {
      const generation = this.generation;
      const started = this.lookUp(digest).then((check) => {
        if (generation === this.generation) {
          this.remember({ digest, check, accountId: check.ok ? check.principal.accountId : undefined, expires: Math.min(now + this.ttlMs, (check.ok ? check.validUntil : undefined) ?? Infinity) });
        }
        return check;
      });
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

  private remember(entry: CacheEntry): void {
    if (this.ttlMs === 0) return;
    if (this.entries.size >= MAX_ENTRIES) {
      const now = this.clock.now();
      for (const [digest, old] of this.entries) if (old.expires <= now) this.entries.delete(digest);
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    }
    // An unknown key is remembered too, briefly, so guessing keys does not reach the database each time;
    // a rejected entry never outlives a real key (keys are random, an unknown one is never created later).
    this.entries.set(entry.digest, entry);
  }
}
