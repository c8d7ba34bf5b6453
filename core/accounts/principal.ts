import type { Plan } from './plans';

/** Who a request acts for: the account, the API key it came with and the account's effective plan. */
export interface Principal {
  accountId: string;
  keyId: string;
  plan: Plan;
  /** Credits this key may use per period, or null when only the account's credits limit it. */
  keyCap: number | null;
  isAgent: boolean;
  claimed: boolean;
}

/** What charging needs of a principal (activities can build one from stored ids). */
export type Payer = Pick<Principal, 'accountId' | 'keyId' | 'keyCap'> & { plan: Pick<Plan, 'credits'> };
