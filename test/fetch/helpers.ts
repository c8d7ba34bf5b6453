/**
 * Fetch through an API (the running service or an in-process app with its own configuration), with
 * an account made for the test and its usage read back from the plan usage endpoint.
 */
import type { Accounts } from '../../core/accounts';
import { newAccount, openAccounts, type AccountsHandle, type TestAccount } from '../helpers/app';

export interface FetchClient {
  account: TestAccount;
  /** `GET|POST {api}/v1/?apikey=…&<params>`. */
  fetch(params: Record<string, string>, init?: RequestInit): Promise<Response>;
  /** Credits used this period, from the plan usage endpoint. */
  used(): Promise<number>;
}

export function fetchClient(api: string, account: TestAccount): FetchClient {
  return {
    account,
    fetch(params, init) {
      const query = new URLSearchParams({ apikey: account.key, ...params });
      return fetch(`${api}/v1/?${query.toString()}`, init);
    },
    async used() {
      const response = await fetch(`${api}/v1/subscriptions/self/details`, { headers: { 'X-API-Key': account.key } });
      const body = (await response.json()) as { usage: number };
      return body.usage;
    },
  };
}

let handle: AccountsHandle | undefined;

/** An account (and key) in the services' database, on the free plan unless told otherwise. */
export async function fetchAccount(options: Parameters<typeof newAccount>[1] = {}): Promise<TestAccount> {
  handle ??= await openAccounts();
  return newAccount(handle.accounts, options);
}

export async function accountsService(): Promise<Accounts> {
  handle ??= await openAccounts();
  return handle.accounts;
}

after(async () => {
  await handle?.close();
  handle = undefined;
});

export async function expectProblemCode(response: Response): Promise<{ status: number; code: string; detail: string; parameter?: string }> {
  const type = response.headers.get('content-type');
  const body = (await response.json()) as { code: string; detail: string; parameter?: string };
  if (type !== 'application/problem+json') throw new Error(`expected a problem document, got ${type}: ${JSON.stringify(body)}`);
  return { status: response.status, ...body };
}
