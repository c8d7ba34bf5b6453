/**
 * Accounts and their API keys in MongoDB. Changes that must stay exact without transactions rest on
 * unique indexes: an active key occupies one of the account's ten `slot` values (`<account>:0` …
 * `<account>:9`, unique), so two concurrent creations can never make an eleventh key; a claim is the
 * insert of `account_claims/<account id>`, so only the first claim wins.
 */
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from '../../base/db';
import { newId } from '../../base/ids';
import type { Clock } from '../../base/clock';
import { generateApiKey, hashApiKey } from './keys';
import type { PlanOverrides } from './plans';

export const MAX_KEYS_PER_ACCOUNT = 10;

export interface AccountDoc {
  _id: string;
  plan: string;
  overrides?: PlanOverrides;
  name: string | null;
  email: string | null;
  is_agent: boolean;
  created_at: Date;
  claimed_at: Date | null;
  deleted_at: Date | null;
  /** SHA-256 of the claim token of an agent account; the token itself is only in the claim link. */
  claim_digest: string | null;
  trial_ends_at: Date | null;
  provenance: Record<string, string> | null;
}

export interface ApiKeyDoc {
  /** SHA-256 of the key. */
  _id: string;
  key_id: string;
  account_id: string;
  /** `<account>:<0..9>` while active, `revoked:<key id>` after. Unique. */
  slot: string;
  name: string | null;
  /** First characters of the key, to recognise it in listings. */
  prefix: string;
  credit_cap: number | null;
  created_at: Date;
  revoked_at: Date | null;
  /** When the key stops working by itself (an OAuth access token); absent or null: never. */
  expires_at?: Date | null;
}

export interface ClaimDoc {
  _id: string;
  email: string;
  at: Date;
}

/** A refusal of the store, for the admin command line and the routes to phrase. */
export class AccountsError extends Error {
  readonly kind = 'accounts-error';
  constructor(
    readonly reason: 'account_not_found' | 'key_not_found' | 'too_many_keys' | 'unknown_plan' | 'account_deleted',
    message: string,
  ) {
    super(message);
    this.name = 'AccountsError';
  }
}

export const isAccountsError = (error: unknown): error is AccountsError =>
  typeof error === 'object' && error !== null && (error as { kind?: unknown }).kind === 'accounts-error';


export interface NewAccount {
  id?: string;
  plan: string;
  overrides?: PlanOverrides;
  name?: string | null;
  email?: string | null;
  isAgent?: boolean;
  claimDigest?: string | null;
  trialEndsAt?: Date | null;
  provenance?: Record<string, string> | null;
}

export class AccountStore {
  readonly accounts: Collection<AccountDoc>;
  readonly keys: Collection<ApiKeyDoc>;
  readonly claims: Collection<ClaimDoc>;

  constructor(
    db: Db,
    private readonly clock: Clock,
  ) {
    this.accounts = db.collection<AccountDoc>('accounts');
    this.keys = db.collection<ApiKeyDoc>('api_keys');
    this.claims = db.collection<ClaimDoc>('account_claims');
  }

  async createAccount(input: NewAccount): Promise<AccountDoc> {
    const account: AccountDoc = {
      _id: input.id ?? newId('acc', this.clock.now()),
      plan: input.plan,
      ...(input.overrides ? { overrides: input.overrides } : {}),
      name: input.name ?? null,
      email: input.email ?? null,
      is_agent: input.isAgent ?? false,
      created_at: new Date(this.clock.now()),
      claimed_at: null,
      deleted_at: null,
      claim_digest: input.claimDigest ?? null,
      trial_ends_at: input.trialEndsAt ?? null,
      provenance: input.provenance ?? null,
    };
    await this.accounts.insertOne(account);
    return account;
  }

  account(id: string): Promise<AccountDoc | null> {
    return this.accounts.findOne({ _id: id });
  }

  async liveAccount(id: string): Promise<AccountDoc> {
    const account = await this.account(id);
    if (!account) throw new AccountsError('account_not_found', `No account ${id}.`);
    if (account.deleted_at) throw new AccountsError('account_deleted', `Account ${id} is deleted.`);
    return account;
  }

  keyByDigest(digest: string): Promise<ApiKeyDoc | null> {
    return this.keys.findOne({ _id: digest });
  }

  async keyById(keyId: string): Promise<ApiKeyDoc> {
    const key = await this.keys.findOne({ key_id: keyId });
    if (!key) throw new AccountsError('key_not_found', `No API key ${keyId}.`);
    return key;
  }

  listKeys(accountId: string): Promise<ApiKeyDoc[]> {
    return this.keys.find({ account_id: accountId }).toArray();
  }

  /** Creates a key and returns it in clear: the only time it is ever seen. */
  async createKey(accountId: string, options: { name?: string | null; creditCap?: number | null; expiresAt?: Date } = {}): Promise<{ key: string; doc: ApiKeyDoc }> {
    await this.liveAccount(accountId);
    for (let attempt = 0; attempt < 20; attempt++) {
      const listed = (await this.listKeys(accountId)).filter((key) => !key.revoked_at);
      // An expired key (an OAuth token never refreshed) gives its slot back.
      const expired = listed.filter((key) => key.expires_at && key.expires_at.getTime() <= this.clock.now());
      for (const key of expired) await this.keys.updateOne({ _id: key._id, revoked_at: null }, { $set: { revoked_at: new Date(this.clock.now()), slot: `revoked:${key.key_id}` } });
      const active = listed.filter((key) => !expired.includes(key));
      const taken = new Set(active.map((key) => key.slot));
      const free = Array.from({ length: MAX_KEYS_PER_ACCOUNT }, (_, n) => `${accountId}:${n}`).find((slot) => !taken.has(slot));
      if (!free) {
        throw new AccountsError('too_many_keys', `Account ${accountId} already has ${MAX_KEYS_PER_ACCOUNT} active API keys; revoke one first.`);
      }
      const key = generateApiKey();
      const doc: ApiKeyDoc = {
        _id: hashApiKey(key),
        key_id: newId('key', this.clock.now()),
        account_id: accountId,
        slot: free,
        name: options.name ?? null,
        prefix: key.slice(0, 6),
        credit_cap: options.creditCap ?? null,
        created_at: new Date(this.clock.now()),
        revoked_at: null,
        ...(options.expiresAt ? { expires_at: options.expiresAt } : {}),
      };
      try {
        await this.keys.insertOne(doc);
        return { key, doc };
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        // Another creation took this slot at the same moment: look again.
      }
    }
    throw new Error(`could not create a key for ${accountId}: too much contention`);
  }

  async revokeKey(keyId: string): Promise<ApiKeyDoc> {
    const key = await this.keyById(keyId);
    if (!key.revoked_at) {
      await this.keys.updateOne({ _id: key._id }, { $set: { revoked_at: new Date(this.clock.now()), slot: `revoked:${key.key_id}` } });
    }
    return key;
  }

  async setKeyCap(keyId: string, creditCap: number | null): Promise<ApiKeyDoc> {
    const key = await this.keyById(keyId);
    await this.keys.updateOne({ _id: key._id }, { $set: { credit_cap: creditCap } });
    return { ...key, credit_cap: creditCap };
  }

  async setPlan(accountId: string, plan: string, overrides: PlanOverrides): Promise<void> {
    await this.liveAccount(accountId);
    await this.accounts.updateOne({ _id: accountId }, { $set: { plan, overrides } });
  }

  async deleteAccount(accountId: string): Promise<void> {
    const account = await this.account(accountId);
    if (!account) throw new AccountsError('account_not_found', `No account ${accountId}.`);
    if (!account.deleted_at) await this.accounts.updateOne({ _id: accountId }, { $set: { deleted_at: new Date(this.clock.now()) } });
  }

  /**
   * Records the first claim of an account; a later claim changes nothing. Returns whether this call
   * claimed it. The account document follows the claim record (repaired here if a crash left it behind).
   */
  async claim(accountId: string, email: string): Promise<boolean> {
    const at = new Date(this.clock.now());
    let first = true;
    try {
      await this.claims.insertOne({ _id: accountId, email, at });
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      first = false;
    }
    const claim = first ? { email, at } : await this.claims.findOne({ _id: accountId });
    const account = await this.account(accountId);
    if (claim && account && !account.claimed_at) {
      await this.accounts.updateOne({ _id: accountId }, { $set: { claimed_at: claim.at, email: claim.email } });
    }
    return first;
  }
}
