/**
 * Claiming an agent's account: the claim link's check (the token is stored only as a SHA-256), the
 * claim itself, and whether an account has been claimed. The claim page (api/accounts/claim-routes.ts)
 * and `GET /api/agent/account` present these; they read nothing themselves.
 */
import { sameDigest } from './keys';
import type { KeyCache } from './key-cache';
import { claimDigest } from './signups';
import type { AccountStore } from './store';

const TOKEN = /^[0-9a-f]{48}$/;

/** What the claim page shows of an account. */
export interface ClaimView {
  accountId: string;
  claimed: boolean;
  email?: string;
}

const viewOf = (account: { _id: string; claimed_at?: Date | null; email?: string | null }): ClaimView => ({
  accountId: account._id,
  claimed: Boolean(account.claimed_at),
  ...(account.email ? { email: account.email } : {}),
});

export function createClaims(accounts: { store: AccountStore; keys: Pick<KeyCache, 'forget'> }) {
  return {
    /** The account a claim link names, or undefined when the link is not a valid one. */
    async open(accountId: string, token: string): Promise<ClaimView | undefined> {
      if (!TOKEN.test(token) || accountId.length > 64) return undefined;
      const account = await accounts.store.account(accountId);
      if (!account?.claim_digest || account.deleted_at) return undefined;
      return sameDigest(account.claim_digest, claimDigest(token)) ? viewOf(account) : undefined;
    },

    /** Claims the account with an email address (a claimed account keeps its first owner) and answers it as it now is. */
    async claim(accountId: string, email: string): Promise<ClaimView> {
      await accounts.store.claim(accountId, email);
      accounts.keys.forget(accountId);
      const account = await accounts.store.account(accountId);
      return account ? viewOf(account) : { accountId, claimed: true };
    },

    /** Read fresh: a claim made through another process must show at once. */
    async isClaimed(accountId: string): Promise<boolean> {
      return Boolean((await accounts.store.account(accountId))?.claimed_at);
    },
  };
}

export type Claims = ReturnType<typeof createClaims>;
