import { expect } from 'chai';
import { authenticate, principalOf, type Surface } from '../../api/auth/authenticate';
import type { ApiDeps } from '../../api/deps';
import type { Route } from '../../api/http/routes';
import { costOf, Hold, ManualClock, type ChargeSurface } from '../../core/accounts';
import { chainOf } from '../../core/accounts/ledger';
import { newAccount, openAccounts, readJson, startApp, type AccountsHandle, type TestApp } from '../helpers/app';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sum of the credits settled in every ledger entry of a period: what the usage record must equal. */
async function settledInLedger(handle: AccountsHandle, accountId: string, period: string): Promise<number> {
  const entries = await handle.db.db.collection('usage_ledger').find({ chain: chainOf(accountId, period) }).toArray();
  return entries
    .flatMap((entry) => entry.log as Array<{ op: string; credits?: number }>)
    .filter((op) => op.op === 'settle')
    .reduce((total, op) => total + (op.credits ?? 0), 0);
}

/** A paid route as a surface would build it: reserve, work (fails with ?fail=1), settle or release. */
const paidRoute = (deps: ApiDeps, surface: Surface & ChargeSurface): Route => ({
  method: 'GET',
  path: `/paid/${surface}`,
  operationId: `paid_${surface}`,
  summary: 'paid',
  tags: ['test'],
  before: [authenticate(deps, surface)],
  responses: { 200: { description: 'ok' } },
  async handler(ctx) {
    const outcome = await deps.accounts.charging.charge(principalOf(ctx), surface, 1, async () => {
      if (ctx.query.fail === '1') throw new Error('the target failed');
      return { value: 'ok', credits: 1 };
    });
    ctx.body = { credits: outcome.credits };
  },
});

describe('charging', () => {
  let handle: AccountsHandle;
  before(async () => {
    handle = await openAccounts();
  });
  after(() => handle.close());

  it('prices the configurations 1, 5, 10 and 25 credits', () => {
    expect(costOf({ jsRender: false, premiumProxy: false })).to.equal(1);
    expect(costOf({ jsRender: true, premiumProxy: false })).to.equal(5);
    expect(costOf({ jsRender: false, premiumProxy: true })).to.equal(10);
    expect(costOf({ jsRender: true, premiumProxy: true })).to.equal(25);
  });

  it('lets exactly 100 of 200 concurrent 1-credit requests through with 100 credits left', async () => {
    const { accounts } = handle;
    const account = await newAccount(accounts, { credits: 150 });
    await (await accounts.charging.reserve(account.principal, 50, 'fetch')).settle(50);
    const outcomes = await Promise.all(Array.from({ length: 200 }, () => accounts.charging.tryReserve(account.principal, 1)));
    const holds = outcomes.filter((outcome): outcome is Hold => outcome instanceof Hold);
    expect(holds).to.have.length(100);
    expect(outcomes.filter((outcome) => !(outcome instanceof Hold) && outcome.refused === 'credits')).to.have.length(100);
    await Promise.all(holds.map((hold) => hold.settle(1)));
    const usage = await accounts.charging.usage(account.accountId);
    expect(usage).to.include({ used: 150, held: 0 });
    expect(await settledInLedger(handle, account.accountId, usage.period)).to.equal(150);
  });

  it('stays exact across two service instances with their own connection pools (two processes)', async () => {
    const other = await openAccounts();
    try {
      const account = await newAccount(handle.accounts, { credits: 100 });
      // Staggered arrivals make many separate commits from both instances race for the same entries.
      const outcomes = await Promise.all(
        Array.from({ length: 200 }, async (_, n) => {
          await pause(Math.random() * 40);
          const service = n % 2 === 0 ? handle.accounts : other.accounts;
          const outcome = await service.charging.tryReserve(account.principal, 1);
          if (!(outcome instanceof Hold)) return false;
          await pause(Math.random() * 10);
          await outcome.settle(1);
          return true;
        }),
      );
      expect(outcomes.filter(Boolean)).to.have.length(100);
      const [first, second] = await Promise.all([
        handle.accounts.charging.usage(account.accountId),
        other.accounts.charging.usage(account.accountId),
      ]);
      expect(first).to.deep.equal(second);
      expect(first).to.include({ used: 100, held: 0 });
      expect(await settledInLedger(handle, account.accountId, first.period)).to.equal(100);
    } finally {
      await other.close();
    }
  });

  it('never spends a credit twice when a process decides on a stale head', async () => {
    const other = await openAccounts();
    try {
      const account = await newAccount(handle.accounts, { credits: 5 });
      // The other process caches the head while 4 credits are left…
      await (await other.accounts.charging.reserve(account.principal, 1, 'fetch')).settle(1);
      // …then this one spends them all…
      await (await handle.accounts.charging.reserve(account.principal, 4, 'fetch')).settle(4);
      // …and the other, still seeing 4 left, must lose the race for the next entry and then refuse.
      const conflicts = other.accounts.ledger.conflicts;
      expect(await other.accounts.charging.tryReserve(account.principal, 1)).to.deep.equal({ refused: 'credits' });
      expect(other.accounts.ledger.conflicts).to.equal(conflicts + 1);
      expect(await other.accounts.charging.usage(account.accountId)).to.include({ used: 5, held: 0 });
    } finally {
      await other.close();
    }
  });

  it('grows a reservation for escalation, within the credits left, and bills what succeeded', async () => {
    const { accounts } = handle;
    const account = await newAccount(accounts, { credits: 12 });
    const hold = await accounts.charging.reserve(account.principal, 1, 'fetch');
    await hold.grow(5, 'fetch');
    const blocked = await hold.tryGrow(25);
    expect(blocked).to.deep.equal({ ok: false, refused: 'credits' });
    const other = await accounts.charging.tryReserve(account.principal, 8);
    expect(other).to.deep.equal({ refused: 'credits' });
    await hold.settle(5);
    expect(await accounts.charging.usage(account.accountId)).to.include({ used: 5, held: 0 });
    await hold.release(); // after settle: nothing happens
    expect(await accounts.charging.usage(account.accountId)).to.include({ used: 5, held: 0 });
  });

  it('returns the credits of a hold whose process died, after CREDIT_HOLD_MS', async () => {
    const clock = new ManualClock(Date.UTC(2031, 4, 10, 12));
    const crashed = await openAccounts({ clock });
    try {
      const account = await newAccount(crashed.accounts, { credits: 3 });
      await crashed.accounts.charging.reserve(account.principal, 3, 'fetch'); // never settled nor released
      expect(await crashed.accounts.charging.tryReserve(account.principal, 1)).to.deep.equal({ refused: 'credits' });
      clock.advance(crashed.config.creditHoldMs + 1);
      const hold = await crashed.accounts.charging.reserve(account.principal, 3, 'fetch');
      await hold.settle(3);
      expect(await crashed.accounts.charging.usage(account.accountId)).to.include({ used: 3, held: 0 });
    } finally {
      await crashed.close();
    }
  });

  it('renews credits at the UTC month boundary (period rollover)', async () => {
    const clock = new ManualClock(Date.parse('2031-01-31T23:59:58Z'));
    const service = await openAccounts({ clock });
    try {
      const account = await newAccount(service.accounts, { credits: 10 });
      await (await service.accounts.charging.reserve(account.principal, 10, 'fetch')).settle(10);
      const refused = await service.accounts.charging.reserve(account.principal, 1, 'fetch').catch((error: unknown) => error);
      expect(refused).to.have.property('code', 'AUTH004');
      clock.advance(3_000);
      await (await service.accounts.charging.reserve(account.principal, 4, 'fetch')).settle(4);
      expect(await service.accounts.charging.usage(account.accountId, '2031-01')).to.include({ used: 10 });
      expect(await service.accounts.charging.usage(account.accountId)).to.include({ period: '2031-02', used: 4 });
    } finally {
      await service.close();
    }
  });

  describe('through paid routes', () => {
    let app: TestApp;
    before(async () => {
      app = await startApp((deps) => [paidRoute(deps, 'fetch'), paidRoute(deps, 'crawl'), paidRoute(deps, 'batch')]);
    });
    after(() => app.close());

    const get = async (surface: string, key: string, query = '') => {
      const headers: Record<string, string> = surface === 'fetch' ? {} : { 'X-API-Key': key };
      const response = await fetch(`${app.url}/paid/${surface}?${query}`, { headers });
      return { status: response.status, body: await readJson(response) };
    };
    const fetchUrl = (key: string, extra = '') => `apikey=${key}${extra}`;

    it('never charges failed requests, and answers 402 AUTH004 / payment_required when credits run out', async () => {
      const account = await newAccount(app.accounts, { credits: 2 });
      for (let n = 0; n < 5; n++) expect((await get('fetch', account.key, fetchUrl(account.key, '&fail=1'))).status).to.equal(500);
      expect(await app.accounts.charging.usage(account.accountId)).to.include({ used: 0, held: 0 });
      expect((await get('fetch', account.key, fetchUrl(account.key))).status).to.equal(200);
      expect((await get('crawl', account.key)).status).to.equal(200);
      const fetchRefusal = await get('fetch', account.key, fetchUrl(account.key));
      expect(fetchRefusal.status).to.equal(402);
      expect(fetchRefusal.body.code).to.equal('AUTH004');
      expect((await get('crawl', account.key)).body.code).to.equal('AUTH004');
      const batchRefusal = await get('batch', account.key);
      expect(batchRefusal.status).to.equal(402);
      expect(batchRefusal.body.code).to.equal('payment_required');
      expect(await app.accounts.charging.usage(account.accountId)).to.include({ used: 2, held: 0 });
    });

    it('stops one key at its own cap with 402 AUTH014 while the account’s other keys keep working', async () => {
      const account = await newAccount(app.accounts, { credits: 100, keyCap: 3 });
      const other = await app.accounts.store.createKey(account.accountId);
      for (let n = 0; n < 3; n++) expect((await get('crawl', account.key)).status).to.equal(200);
      const capped = await get('crawl', account.key);
      expect(capped.status).to.equal(402);
      expect(capped.body.code).to.equal('AUTH014');
      expect((await get('batch', account.key)).body.code).to.equal('payment_required');
      expect((await get('crawl', other.key)).status).to.equal(200);
      const usage = await app.accounts.charging.usage(account.accountId);
      expect(usage.used).to.equal(4);
      expect(usage.keys).to.deep.equal({ [account.keyId]: 3, [other.doc.key_id]: 1 });
    });
  });
});
