/**
 * Per-process shares of account-wide limits: with n live API processes each takes 1/n of an account's
 * request budget and of a network's failed look-ups (at least one request of each), and an account's
 * database-backed requests wait in its own line within its share of the pool, refused past it.
 */
import { expect } from 'chai';
import { AuthFailureLimiter } from '../../../core/accounts/auth-failures';
import { DatabaseShare } from '../../../core/accounts/database-share';
import { RequestBudget } from '../../../core/accounts/request-budget';
import { ManualClock } from '../../../base/clock';

describe('shares of account-wide limits', () => {
  it('takes budget ÷ live processes, at least one request of each', () => {
    let live = 1;
    const budget = new RequestBudget(new ManualClock(0), () => live);
    const limits = { requestsPerSecond: 20, requestBurst: 40, requestsInFlight: 8 };
    expect(budget.share(limits)).to.deep.equal(limits);
    live = 4;
    expect(budget.share(limits)).to.deep.equal({ requestsPerSecond: 5, requestBurst: 10, requestsInFlight: 2 });
    live = 64;
    expect(budget.share(limits)).to.deep.equal({ requestsPerSecond: 20 / 64, requestBurst: 1, requestsInFlight: 1 });
    live = 2;
    const admitted = Array.from({ length: 40 }, () => budget.take('a', { ...limits, requestsInFlight: 1_000 }).ok).filter(Boolean).length;
    expect(admitted, 'a burst of 40 shared by two processes').to.equal(20);
  });

  it('splits a network’s failed look-ups among the live processes', () => {
    let live = 3;
    const limiter = new AuthFailureLimiter(new ManualClock(0), { burst: 30, perMinute: 0 }, () => live);
    const granted = Array.from({ length: 30 }, () => limiter.take('net').ok).filter(Boolean).length;
    expect(granted).to.equal(10);
    live = 1;
    expect(limiter.take('other').ok).to.equal(true);
  });

  it('holds an account to its share of the pool, its further requests waiting in its own line, and refuses past it', async () => {
    const share = DatabaseShare.of(100, 2);
    expect(share.perAccount).to.equal(2);
    const turns = await Promise.all([share.take('a'), share.take('a')]);
    expect(turns.map((turn) => turn.ok)).to.deep.equal([true, true]);
    const waiting = [share.take('a'), share.take('a')];
    expect((await share.take('a')).ok, 'past the share and the line').to.equal(false);
    expect((await share.take('b')).ok, 'another account').to.equal(true);
    for (const turn of turns) if (turn.ok) turn.release();
    expect((await Promise.all(waiting)).map((turn) => turn.ok), 'the line served in order').to.deep.equal([true, true]);
    expect(share.refused).to.equal(1);
  });
});
