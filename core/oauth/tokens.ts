/**
 * OAuth tokens: the access token is an API key made for the client that expires after
 * OAUTH_ACCESS_TOKEN_TTL_SECONDS (an hour); with it comes a refresh token that works once: spending
 * it (deleting its record, so two racing refreshes get one answer) revokes the access key it was
 * issued with and issues a new pair. Either token can be revoked by its holder (RFC 7009).
 *
 *   oauth_refresh_tokens  `_id` the SHA-256 of the token (never the token), the client, account and
 *                         the access key issued with it
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import type { Accounts } from '../accounts';
import { hashApiKey, isWellFormedKey } from '../accounts/keys';
import type { IndexRegistration } from '../../base/db';

/** A refresh token unused this long is refused (the client signs in again). */
export const REFRESH_TTL_MS = 30 * 86_400_000;

export const OAUTH_TOKEN_INDEXES: IndexRegistration = {
  oauth_refresh_tokens: [{ key: { expires_at: 1 }, name: 'expires_at' }],
};

interface RefreshDoc {
  _id: string;
  client_id: string;
  account_id: string;
  key_id: string;
  scope: string;
  expires_at: Date;
}

export interface TokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

const digest = (value: string): string => createHash('sha256').update(value).digest('hex');

export function createOAuthTokens(db: Db, accounts: Pick<Accounts, 'store' | 'keys'>, accessTtlSeconds: number, now: () => number = Date.now) {
  const refreshTokens = db.collection<RefreshDoc>('oauth_refresh_tokens');

  /** A new access key and refresh token for the grant. Throws AccountsError (no free key slot). */
  async function issue(grant: { clientId: string; clientName: string; accountId: string; scope: string }): Promise<TokenAnswer> {
    const { key, doc } = await accounts.store.createKey(grant.accountId, { name: `oauth:${grant.clientName}`, expiresAt: new Date(now() + accessTtlSeconds * 1000) });
    const refresh = randomBytes(32).toString('base64url');
    await refreshTokens.insertOne({ _id: digest(refresh), client_id: grant.clientId, account_id: grant.accountId, key_id: doc.key_id, scope: grant.scope, expires_at: new Date(now() + REFRESH_TTL_MS) });
    return { access_token: key, token_type: 'Bearer', expires_in: accessTtlSeconds, refresh_token: refresh, scope: grant.scope };
  }

  async function revokeKey(accountId: string, keyId: string): Promise<void> {
    await accounts.store.revokeKey(keyId).catch(() => undefined);
    accounts.keys.forget(accountId);
  }

  return {
    issue,

    /** Spends a refresh token (it works once) for a new pair; undefined when it is unknown, spent, expired or another client's. */
    async refresh(token: string, clientId: string, clientName: string): Promise<TokenAnswer | undefined> {
      const spent = await refreshTokens.findOneAndDelete({ _id: digest(token) });
      if (!spent || spent.expires_at.getTime() <= now()) return undefined;
      // The old access token ends with its refresh token.
      await revokeKey(spent.account_id, spent.key_id);
      if (spent.client_id !== clientId) return undefined;
      return issue({ clientId, clientName, accountId: spent.account_id, scope: spent.scope });
    },

    /** RFC 7009: revokes an access token (an OAuth key) or a refresh token and its access token; unknown tokens are fine. */
    async revoke(token: string): Promise<void> {
      const refresh = await refreshTokens.findOneAndDelete({ _id: digest(token) });
      if (refresh) return revokeKey(refresh.account_id, refresh.key_id);
      if (!isWellFormedKey(token)) return;
      const key = await accounts.store.keyByDigest(hashApiKey(token));
      // Only keys made for OAuth clients: this endpoint is no way to revoke an account's own keys.
      if (key && !key.revoked_at && key.name?.startsWith('oauth:')) {
        await revokeKey(key.account_id, key.key_id);
        await refreshTokens.deleteMany({ key_id: key.key_id });
      }
    },
  };
}

export type OAuthTokens = ReturnType<typeof createOAuthTokens>;
