/**
 * Agent signups: an account and a free-plan key created with no human present, limited per client
 * network. Each signup inserts `signups/<network>|<window>|<n>` for the first free `n` below the
 * limit; the unique `_id` makes the limit exact across processes without counters.
 */
import { createHash, randomBytes } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import type { Collection } from 'mongodb';
import { isDuplicateKey } from '../../base/db';
import { newId } from '../../base/ids';
import type { Clock } from '../../base/clock';
import { periodBounds, periodOf } from './periods';
import { FREE_PLAN } from './plans';
import type { AccountStore } from './store';

export interface SignupDoc {
  _id: string;
  network: string;
  account_id: string;
  at: Date;
  provenance: Record<string, string>;
}

export interface SignupResult {
  apiKey: string;
  accountId: string;
  claimToken: string;
  trialEndsAt: Date;
}

export type SignupOutcome = { ok: true; signup: SignupResult } | { ok: false; retryAfterSeconds: number };


/** The network a client address belongs to, for rate limits: IPv4 /24, IPv6 /64. */
export function clientNetwork(address: string): string {
  const bare = address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
  if (isIPv4(bare)) return `${bare.split('.').slice(0, 3).join('.')}.0/24`;
  if (isIPv6(bare)) {
    const [head = '', tail = ''] = bare.toLowerCase().split('::');
    const left = head ? head.split(':') : [];
    const right = tail ? tail.split(':') : [];
    const groups = bare.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
    return `${groups.slice(0, 4).map((group) => group.replace(/^0+(?=.)/, '')).join(':')}::/64`;
  }
  return 'unknown';
}

export const claimDigest = (token: string): string => createHash('sha256').update(token).digest('hex');

export class Signups {
  constructor(
    private readonly records: Collection<SignupDoc>,
    private readonly store: AccountStore,
    private readonly clock: Clock,
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  async signUp(network: string, provenance: Record<string, string>): Promise<SignupOutcome> {
    const now = this.clock.now();
    const window = Math.floor(now / this.windowMs);
    const accountId = newId('acc', now);
    let admitted = false;
    for (let n = 0; n < this.limit && !admitted; n++) {
      try {
        await this.records.insertOne({ _id: `${network}|${window}|${n}`, network, account_id: accountId, at: new Date(now), provenance });
        admitted = true;
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
      }
    }
    if (!admitted) return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(((window + 1) * this.windowMs - now) / 1000)) };

    const claimToken = randomBytes(24).toString('hex');
    // The trial is the first monthly period; it is not refreshed.
    const trialEndsAt = periodBounds(periodOf(now)).end;
    await this.store.createAccount({
      id: accountId,
      plan: FREE_PLAN,
      isAgent: true,
      claimDigest: claimDigest(claimToken),
      trialEndsAt,
      provenance,
    });
    const { key } = await this.store.createKey(accountId, { name: 'agent signup' });
    return { ok: true, signup: { apiKey: key, accountId, claimToken, trialEndsAt } };
  }
}
