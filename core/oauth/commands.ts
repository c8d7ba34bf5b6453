/**
 * The OAuth commands: client registration, the authorization request's check, the grant of a code
 * (after a key sign-in or a signup) and the token endpoint's exchange of a code and its PKCE verifier
 * for an API key made for the client. Routes (api/oauth) parse forms and present OAuth's own answers;
 * every read and write of OAuth's records and of the account's keys is here.
 */
import type { Db } from 'mongodb';
import type { Accounts } from '../accounts';
import { isWellFormedKey } from '../accounts/keys';
import { AccountsError } from '../accounts/store';
import { checkAuthorization, SCOPE, type AuthorizationRequest, type Checked } from './authorize';
import { OAuthStore, s256, type OAuthClientDoc } from './store';
import { createOAuthTokens, type Revocation, type TokenAnswer } from './tokens';

export { redirectTo, SCOPE, type AuthorizationRequest, type Checked } from './authorize';

export interface CodeExchange {
  code: string;
  clientId: string;
  redirectUri?: string;
  verifier: string;
}

export type Exchanged = { ok: true; answer: TokenAnswer } | { ok: false; error: 'invalid_grant'; description: string };

export function createOAuthCommands(deps: { db: Db; accounts: Pick<Accounts, 'store' | 'keys'>; accessTtlSeconds: number; now?: () => number }) {
  const store = new OAuthStore(deps.db, deps.now);
  const tokens = createOAuthTokens(deps.db, deps.accounts, deps.accessTtlSeconds, deps.now);

  const grant = (request: AuthorizationRequest, accountId: string): Promise<string> =>
    store.issueCode({ client_id: request.client._id, redirect_uri: request.redirectUri, code_challenge: request.codeChallenge, account_id: accountId, scope: SCOPE });

  return {
    register: (redirectUris: string[], clientName: string | undefined): Promise<OAuthClientDoc> => store.register(redirectUris, clientName),

    /** The authorization request's parameters checked against the registered client (authorize.ts). */
    checkAuthorization: (given: Record<string, unknown>): Promise<Checked> => checkAuthorization(store, given),

    /** A code for an account just created by a signup on the consent page. */
    grant,

    /** The account holder signed in with a key of theirs: a code for its account, or undefined when the key is not an active one. */
    async grantWithKey(request: AuthorizationRequest, key: string): Promise<string | undefined> {
      const check = isWellFormedKey(key) ? await deps.accounts.keys.check(key) : undefined;
      if (!check?.ok) return undefined;
      return grant(request, check.principal.accountId);
    },

    /** Spent before it is checked: a code is good for one attempt, right or wrong. */
    async exchange(request: CodeExchange): Promise<Exchanged> {
      const refuse = (description: string): Exchanged => ({ ok: false, error: 'invalid_grant', description });
      const granted = await store.spendCode(request.code);
      if (!granted) return refuse('The code is unknown, expired or already used.');
      if (granted.client_id !== request.clientId) return refuse('The code was issued to another client.');
      if ((request.redirectUri ?? granted.redirect_uri) !== granted.redirect_uri) return refuse('redirect_uri differs from the authorization request’s.');
      if (s256(request.verifier) !== granted.code_challenge) return refuse('The code_verifier does not match the code_challenge.');
      const client = await store.client(request.clientId);
      try {
        return { ok: true, answer: await tokens.issue({ clientId: request.clientId, clientName: client?.client_name ?? request.clientId, accountId: granted.account_id, scope: granted.scope }) };
      } catch (error) {
        if (error instanceof AccountsError) return refuse(error.message);
        throw error;
      }
    },

    /** `grant_type=refresh_token`: the token works once, for a new pair (core/oauth/tokens.ts). */
    async refresh(refreshToken: string, clientId: string): Promise<Exchanged> {
      const refuse = (description: string): Exchanged => ({ ok: false, error: 'invalid_grant', description });
      const client = await store.client(clientId);
      if (!client) return refuse('The refresh token is unknown, expired or already used.');
      try {
        const answer = await tokens.refresh(refreshToken, client._id, client.client_name ?? client._id);
        return answer ? { ok: true, answer } : refuse('The refresh token is unknown, expired or already used.');
      } catch (error) {
        if (error instanceof AccountsError) return refuse(error.message);
        throw error;
      }
    },

    /** RFC 7009 revocation of an access or refresh token issued to the client; an unknown token is no error. */
    revoke: (token: string, clientId: string): Promise<Revocation> => tokens.revoke(token, clientId),
  };
}

export type OAuthCommands = ReturnType<typeof createOAuthCommands>;
