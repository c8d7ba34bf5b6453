import type { IndexRegistration } from '../../base/db';

/**
 * Indexes of the account collections (created at start-up: core/indexes.ts). Look-ups that must be fast on
 * FerretDB go by `_id`; these indexes enforce the uniqueness rules and serve MongoDB's queries.
 */
export const ACCOUNT_INDEXES: IndexRegistration = {
  api_keys: [
    { key: { key_id: 1 }, name: 'key_id', unique: true },
    { key: { slot: 1 }, name: 'slot', unique: true },
    { key: { account_id: 1 }, name: 'account_id' },
  ],
  usage_ledger: [{ key: { chain: 1, seq: 1 }, name: 'chain_seq', unique: true }],
  slot_claims: [{ key: { chain: 1, seq: 1 }, name: 'chain_seq', unique: true }],
};
