/**
 * OAuth tokens: the access token is an API key made for the client that expires after
 * OAUTH_ACCESS_TOKEN_TTL_SECONDS (an hour); with it comes a refresh token that works once: spending
 * it (deleting its record, so two racing refreshes get one answer) revokes the access key it was
 * issued with and issues a new pair. Every pair descends from one authorization: its family. A spent
 * refresh token leaves a tombstone, and presenting it again means it was copied: the whole family is
 * revoked, the thief's pair and the rightful client's alike (RFC 9700 §4.14.2). A token is revoked
 * only by the client it was issued to (RFC 7009).
 *
 *   oauth_refresh_tokens  `_id` the SHA-256 of the token (never the token), the client, account,
 *                         family and the access key issued with it;
 *                         `spent:<SHA-256>` the tombstone of a spent token (its family, until the
 *                         token would have expired); `family:<id>` a revoked family, so a refresh
 *                         racing the revocation does not outlive it
 */
import { createHash, randomBytes } from 'node:crypto';
import { MongoServerError, type Db } from 'mongodb';
import type { Accounts } from '../accounts';
import { hashApiKey, isWellFormedKey } from '../accounts/keys';
import type { IndexRegistration } from '../../base/db';

/** A refresh token unused this long is refused (the client signs in again). */
export const REFRESH_TTL_MS = 30 * 86_400_000;

export const OAUTH_TOKEN_INDEXES: IndexRegistration = {
  oauth_refresh_tokens: [
    { key: { expires_at: 1 }, name: 'expires_at' },
    { key: { family_id: 1 }, name: 'family_id' },
    { key: { key_id: 1 }, name: 'key_id' },
  ],
};

/** A live refresh token, a spent one's tombstone (`spent_at`, no key) or a revoked family (`revoked_at`). */
interface RefreshDoc {
  _id: string;
  client_id?: string;
  account_id?: string;
  key_id?: string;
  scope?: string;
  /** Absent on tokens issued before families were kept: such a token is a family of its own. */
  family_id?: string;
  spent_at?: Date;
  revoked_at?: Date;
  expires_at: Date;
}

/** What a revocation request came to: RFC 7009 answers `revoked` and `unknown` alike; `foreign` is refused. */
export type Revocation = 'revoked' | 'unknown' | 'foreign';

interface Grant {
  clientId: string;
  clientName: string;
  accountId: string;
  scope: string;
}

export interface TokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

const digest = (value: string): string => createHash('sha256').update(value).digest('hex');
const isDuplicate = (error: unknown): boolean => error instanceof MongoServerError && error.code === 11000;

export function createOAuthTokens(db: Db, accounts: Pick<Accounts, 'store' | 'keys'>, accessTtlSeconds: number, now: () => number = Date.now) {
  const refreshTokens = db.collection<RefreshDoc>('oauth_refresh_tokens');

  /** A new access key and refresh token in the family. Throws AccountsError (no free key slot). */
  async function issuePair(grant: Grant, familyId: string): Promise<TokenAnswer> {
    const { key, doc } = await accounts.store.createKey(grant.accountId, { name: `oauth:${grant.clientName}`, expiresAt: new Date(now() + accessTtlSeconds * 1000) });
    const refresh = randomBytes(32).toString('base64url');
    await refreshTokens.insertOne({ _id: digest(refresh), client_id: grant.clientId, account_id: grant.accountId, key_id: doc.key_id, scope: grant.scope, family_id: familyId, expires_at: new Date(now() + REFRESH_TTL_MS) });
    return { access_token: key, token_type: 'Bearer', expires_in: accessTtlSeconds, refresh_token: refresh, scope: grant.scope };
  }

  async function revokeKey(accountId: string, keyId: string): Promise<void> {
    await accounts.store.revokeKey(keyId).catch(() => undefined);
    accounts.keys.forget(accountId);
  }

  /** Every live token of the family ends, with its access key; later refreshes in it are refused. */
  async function revokeFamily(familyId: string): Promise<void> {
    const mark = `family:${familyId}`;
    await refreshTokens.updateOne({ _id: mark }, { $set: { revoked_at: new Date(now()), expires_at: new Date(now() + REFRESH_TTL_MS) } }, { upsert: true }).catch((error: unknown) => {
      if (!isDuplicate(error)) throw error;
    });
    for (const live of await refreshTokens.find({ family_id: familyId, key_id: { $exists: true } }).toArray()) await revokePair(live);
  }

  async function revokePair(live: RefreshDoc): Promise<void> {
    await refreshTokens.deleteOne({ _id: live._id });
    if (live.account_id !== undefined && live.key_id !== undefined) await revokeKey(live.account_id, live.key_id);
  }

  // A token's `_id` is a hex digest: never a tombstone's (`spent:`) nor a family's mark (`family:`).

  /** The family of a live token or tombstone (a token from before families is its own). */
  const familyOf = (doc: RefreshDoc): string => doc.family_id ?? `token:${doc._id}`;

  return {
    /** The first pair of a new authorization (a family of its own). Throws AccountsError (no free key slot). */
    issue: (grant: Grant): Promise<TokenAnswer> => issuePair(grant, randomBytes(16).toString('hex')),

    /**
     * Spends a refresh token (it works once) for a new pair; undefined when it is unknown, spent,
     * expired or another client's. A spent token presented again revokes its whole family.
     */
    async refresh(token: string, clientId: string, clientName: string): Promise<TokenAnswer | undefined> {
      const id = digest(token);
      const spent = await refreshTokens.findOneAndDelete({ _id: id });
      if (!spent) {
        const tombstone = await refreshTokens.findOne({ _id: `spent:${id}` });
        if (tombstone && tombstone.expires_at.getTime() > now()) await revokeFamily(familyOf(tombstone));
        return undefined;
      }
      if (spent.expires_at.getTime() <= now()) return undefined;
      const familyId = familyOf(spent);
      try {
        await refreshTokens.insertOne({ _id: `spent:${id}`, family_id: familyId, spent_at: new Date(now()), expires_at: spent.expires_at });
      } catch (error) {
        // Another refresh spent it at the same moment (the store's delete is not atomic everywhere): a replay.
        if (!isDuplicate(error)) throw error;
        await revokeFamily(familyId);
        return undefined;
      }
      // The old access token ends with its refresh token.
      if (spent.account_id !== undefined && spent.key_id !== undefined) await revokeKey(spent.account_id, spent.key_id);
      if (spent.client_id !== clientId || spent.account_id === undefined) return undefined;
      const answer = await issuePair({ clientId, clientName, accountId: spent.account_id, scope: spent.scope ?? '' }, familyId);
      // The revocation writes its mark before it looks for the family's tokens, this after it wrote its
      // token: one of the two sees the other, so a pair issued during a revocation does not survive it.
      if (await refreshTokens.findOne({ _id: `family:${familyId}` })) {
        await revokeFamily(familyId);
        return undefined;
      }
      return answer;
    },

    /**
     * RFC 7009: revokes an access token (an OAuth key) or a refresh token, with the family they belong
     * to, when they were issued to `clientId`; unknown tokens are no error, another client's change nothing.
     */
    async revoke(token: string, clientId: string): Promise<Revocation> {
      const refresh = await refreshTokens.findOne({ _id: digest(token) });
      if (refresh) {
        if (refresh.client_id !== clientId) return 'foreign';
        await revokePair(refresh);
        await revokeFamily(familyOf(refresh));
        return 'revoked';
      }
      if (!isWellFormedKey(token)) return 'unknown';
      const key = await accounts.store.keyByDigest(hashApiKey(token));
      // Only keys made for OAuth clients: this endpoint is no way to revoke an account's own keys.
      if (!key || key.revoked_at || !key.name?.startsWith('oauth:')) return 'unknown';
      const pair = await refreshTokens.findOne({ key_id: key.key_id });
      // The client a key was issued to is on its refresh token; without one, no client can be told apart.
      if (!pair) return 'unknown';
      if (pair.client_id !== clientId) return 'foreign';
      await revokePair(pair);
      await revokeFamily(familyOf(pair));
      return 'revoked';
    },
  };
}

export type OAuthTokens = ReturnType<typeof createOAuthTokens>;
