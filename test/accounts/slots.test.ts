import { expect } from 'chai';
import http from 'node:http';
import { withSlot } from '../../api/accounts/concurrency';
import { authenticate, principalOf } from '../../api/auth/authenticate';
import type { ApiDeps } from '../../api/deps';
import type { Route } from '../../api/http/routes';
import { ManualClock } from '../../core/accounts';
import { eventually } from '../helpers/stack';
import { gate, newAccount, openAccounts, readJson, startApp, type TestApp } from '../helpers/app';

/** A Fetch-like route: authenticates with `apikey`, then holds a slot until the test opens the gate. */
function slowRoute(deps: ApiDeps, hooks: { started: () => void; wait: () => Promise<void>; aborted: () => void }): Route {
  return {
    method: 'GET',
    path: '/slow',
    operationId: 'slow',
    summary: 'slow',
    tags: ['test'],
    before: [authenticate(deps, 'fetch')],
    responses: { 200: { description: 'ok' } },
    async handler(ctx) {
      ctx.body = await withSlot(ctx, deps.accounts, principalOf(ctx), async (signal) => {
        signal.addEventListener('abort', hooks.aborted);
        hooks.started();
        await hooks.wait();
        return { done: true };
      });
    },
  };
}

describe('concurrency slots', () => {
  let app: TestApp;
  let release = gate();
  let started = 0;
  let aborted = 0;

  before(async () => {
    app = await startApp((deps) => [
      slowRoute(deps, { started: () => started++, wait: () => release.promise, aborted: () => aborted++ }),
    ]);
  });
  after(() => app.close());
  beforeEach(() => {
    release = gate();
    started = 0;
    aborted = 0;
  });

  it('answers 429 AUTH008 when every slot is in use, with the concurrency headers', async () => {
    const account = await newAccount(app.accounts, { concurrency: 2 });
    const url = `${app.url}/slow?apikey=${account.key}`;
    const running = [fetch(url), fetch(url)];
    await eventually(async () => started === 2, 100, 20);
    const refused = await fetch(url);
    expect(refused.status).to.equal(429);
    expect(refused.headers.get('concurrency-limit')).to.equal('2');
    expect(refused.headers.get('concurrency-remaining')).to.equal('0');
    expect((await readJson(refused)).code).to.equal('AUTH008');
    release.open();
    const answers = await Promise.all(running);
    expect(answers.map((answer) => answer.status)).to.deep.equal([200, 200]);
    expect(answers.map((answer) => answer.headers.get('concurrency-limit'))).to.deep.equal(['2', '2']);
    expect(answers.map((answer) => answer.headers.get('concurrency-remaining')).sort()).to.deep.equal(['0', '1']);
    expect(await app.accounts.slots.inUse(account.accountId)).to.equal(0);
  });

  it('frees the slot when the client disconnects mid-request', async () => {
    const account = await newAccount(app.accounts, { concurrency: 1 });
    const url = `${app.url}/slow?apikey=${account.key}`;
    const request = http.get(url);
    request.on('error', () => undefined);
    await eventually(async () => started === 1, 100, 20);
    expect(await app.accounts.slots.inUse(account.accountId)).to.equal(1);
    request.destroy();
    await eventually(async () => (await app.accounts.slots.inUse(account.accountId)) === 0, 100, 20);
    expect(aborted).to.equal(1);
    // The first request's work is still blocked, yet its slot is free for the next one.
    const next = fetch(url);
    await eventually(async () => started === 2, 100, 20);
    release.open();
    expect((await next).status).to.equal(200);
  });

  it('never grants more slots than the plan has across two processes', async () => {
    const other = await openAccounts({ env: { SLOT_CLAIM_IDLE_MS: '200' } });
    try {
      const account = await newAccount(app.accounts, { concurrency: 3 });
      const grants = await Promise.all(
        Array.from({ length: 20 }, (_, n) => (n % 2 ? app : other).accounts.slots.acquire(account.accountId, 3)),
      );
      const granted = grants.filter((grant) => grant.ok);
      expect(granted).to.have.length(3);
      await Promise.all(granted.map((grant) => grant.ok && grant.lease.release()));
      // Freed at once in memory; the other process gives its unused claim back within two idle windows.
      await eventually(async () => (await app.accounts.slots.inUse(account.accountId)) === 0, 50, 100);
    } finally {
      await other.close();
    }
  });

  it('reclaims the slots of a process that died once their leases expire, not before', async () => {
    const start = Date.now();
    const deadClock = new ManualClock(start);
    const liveClock = new ManualClock(start);
    const dead = await openAccounts({ clock: deadClock });
    const live = await openAccounts({ clock: liveClock });
    try {
      const leaseMs = live.config.slotLeaseMs;
      const account = await newAccount(live.accounts, { concurrency: 2 });
      expect((await dead.accounts.slots.acquire(account.accountId, 2)).ok).to.equal(true);
      expect((await dead.accounts.slots.acquire(account.accountId, 2)).ok).to.equal(true);
      // While the holder renews, its leases stay.
      deadClock.advance((leaseMs * 2) / 3);
      await dead.accounts.slots.renew();
      liveClock.advance(leaseMs + 1);
      expect(await live.accounts.slots.acquire(account.accountId, 2)).to.deep.include({ ok: false, inUse: 2 });
      // The holder dies: no more renewals, no release.
      dead.accounts.slots.abandon();
      await dead.db.close();
      liveClock.advance(leaseMs);
      const grant = await live.accounts.slots.acquire(account.accountId, 2);
      expect(grant).to.deep.include({ ok: true, inUse: 1 });
      expect(await live.accounts.slots.inUse(account.accountId)).to.equal(1);
    } finally {
      await live.close();
      await dead.close().catch(() => undefined);
    }
  });
});
