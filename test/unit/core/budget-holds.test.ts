/**
 * Refusals over an account's rate are held back one token apart: the first until the account's next
 * token, each one refused after it until the token after, at most HOLD_MS (1 s). A client whose
 * connections were refused together then comes back one connection per token, never all at once to
 * a refilled bucket. Another account's refusals have turns of their own.
 */
import { expect } from 'chai';
import { ManualClock } from '../../../base/clock';
import { RequestBudget } from '../../../core/accounts/request-budget';

describe('request budget: refusals held back in turns', () => {
  const limits = { requestsPerSecond: 20, requestBurst: 2, requestsInFlight: 1_000 };

  it('answers the refusals of one account a token apart, from its next token, within a second', () => {
    const clock = new ManualClock(0);
    const budget = new RequestBudget(clock);
    for (let n = 0; n < 2; n++) {
      const taken = budget.take('a', limits);
      if (taken.ok) taken.done();
    }
    const holds: Array<number | undefined> = [];
    for (let n = 0; n < 22; n++) {
      const refused = budget.take('a', limits);
      expect(refused.ok, `request ${n + 3}`).to.equal(false);
      if (!refused.ok) holds.push(budget.holdMs('a', refused));
    }
    expect(holds).to.deep.equal([...Array.from({ length: 20 }, (_, n) => 50 * (n + 1)), 1_000, 1_000]);

    const first = budget.take('b', { ...limits, requestBurst: 1 });
    expect(first.ok).to.equal(true);
    const refusedB = budget.take('b', { ...limits, requestBurst: 1 });
    expect(refusedB.ok ? undefined : budget.holdMs('b', refusedB), 'another account: its own next token').to.equal(50);

    // Later, past every turn given: the next refusal waits for the next token only.
    clock.advance(2_000);
    for (let n = 0; n < 2; n++) budget.take('a', limits);
    const later = budget.take('a', limits);
    expect(later.ok ? undefined : budget.holdMs('a', later)).to.equal(50);
  });

  it('answers at once a refusal of requests in flight, and one of an account it never admitted', () => {
    const budget = new RequestBudget(new ManualClock(0));
    expect(budget.holdMs('a', { reason: 'rate', waitMs: 50 })).to.equal(undefined);
    const taken = budget.take('a', { ...limits, requestsInFlight: 1 });
    expect(taken.ok).to.equal(true);
    const refused = budget.take('a', { ...limits, requestsInFlight: 1 });
    expect(refused.ok ? undefined : [refused.reason, budget.holdMs('a', refused)]).to.deep.equal(['in_flight', undefined]);
  });
});
