import { expect } from 'chai';
import { generateApiKey } from '../../core/accounts/keys';
import { eventually, testStack } from '../helpers/stack';
import { newAccount, openAccounts, readJson, type AccountsHandle, type TestAccount } from '../helpers/app';

const DETAILS = '/v1/subscriptions/self/details';

describe('plan usage and the agent account on the running service', () => {
  let handle: AccountsHandle;
  let account: TestAccount;
  before(async () => {
    handle = await openAccounts();
    account = await newAccount(handle.accounts, { credits: 1000, concurrency: 2 });
  });
  after(() => handle.close());

  const get = async (path: string, headers: Record<string, string> = {}) => {
    const response = await fetch(`${testStack().urls.api}${path}`, { headers });
    return { response, body: await readJson(response) };
  };

  it('reports the period, credits used and left, and concurrency, taking no slot', async () => {
    await (await handle.accounts.charging.reserve(account.principal, 25, 'fetch')).settle(25);
    const slots = await Promise.all([1, 2].map(() => handle.accounts.slots.acquire(account.accountId, 2)));
    try {
      const { response, body } = await get(DETAILS, { 'X-API-Key': account.key });
      expect(response.status).to.equal(200);
      const now = new Date();
      expect(body).to.deep.include({
        status: 'active',
        period_starts_at: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString(),
        period_ends_at: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
        usage: 25,
        usage_percent: 2.5,
        top_ups: [],
      });
      const plan = body.plan as Record<string, unknown>;
      expect(plan).to.include({ name: 'free', price: 0, recurrence: 'monthly' });
      expect((plan.products as { api: unknown }).api).to.deep.include({
        usage: 25,
        limit: 1000,
        remaining: 975,
        concurrency: { limit: 2, usage: 2 },
      });
    } finally {
      await Promise.all(slots.map((grant) => grant.ok && grant.lease.release()));
    }
  });

  it('answers AUTH001 / AUTH002 / AUTH003 problem documents on plan usage', async () => {
    const cases: Array<[Record<string, string>, string, string]> = [
      [{}, '', 'AUTH001'],
      [{}, `?apikey=${account.key}`, 'AUTH001'],
      [{ 'X-API-Key': 'not-a-key' }, '', 'AUTH002'],
      [{ 'X-API-Key': 'f'.repeat(12_000) }, '', 'AUTH002'],
      [{ 'X-API-Key': generateApiKey() }, '', 'AUTH003'],
    ];
    for (const [headers, query, code] of cases) {
      const { response, body } = await get(`${DETAILS}${query}`, headers);
      expect(response.status).to.equal(401);
      expect(response.headers.get('content-type')).to.equal('application/problem+json');
      expect(body).to.include({ code, status: 401 });
    }
  });

  it('answers {error: "unauthenticated"} on the agent account', async () => {
    const attempts: Array<Record<string, string>> = [{}, { 'X-API-Key': 'xyz' }, { 'X-API-Key': generateApiKey() }];
    for (const headers of attempts) {
      const { response, body } = await get('/api/agent/account', headers);
      expect(response.status).to.equal(401);
      expect(body.error).to.equal('unauthenticated');
      expect(body.message).to.be.a('string');
    }
    const { body } = await get('/api/agent/account', { 'X-API-Key': account.key });
    expect(body).to.deep.equal({ accountId: account.accountId, claimed: false, isAgent: false });
  });

  it('refuses a key revoked by another process once this process’s cache entry expires', async () => {
    const doomed = await newAccount(handle.accounts);
    expect((await get(DETAILS, { 'X-API-Key': doomed.key })).response.status).to.equal(200);
    await handle.accounts.store.revokeKey(doomed.keyId);
    await eventually(async () => (await get(DETAILS, { 'X-API-Key': doomed.key })).body.code === 'AUTH003', 60, 250);
    const deleted = await newAccount(handle.accounts);
    expect((await get(DETAILS, { 'X-API-Key': deleted.key })).response.status).to.equal(200);
    await handle.accounts.store.deleteAccount(deleted.accountId);
    await eventually(async () => (await get(DETAILS, { 'X-API-Key': deleted.key })).response.status === 401, 60, 250);
  });
});
