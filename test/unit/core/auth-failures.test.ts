/** Failed key look-ups per client network: a burst, refilled over time, and a valid key gives its look-up back. */
import { expect } from 'chai';
import { AuthFailureLimiter } from '../../../core/accounts/auth-failures';
import { ManualClock } from '../../../base/clock';

describe('failed key look-ups per client network', () => {
  it('allows a burst of look-ups, refuses the next with a Retry-After, and refills over time', () => {
    const clock = new ManualClock(0);
    const limiter = new AuthFailureLimiter(clock, { burst: 3, perMinute: 6 });
    for (let n = 0; n < 3; n++) expect(limiter.take('a').ok, `look-up ${n}`).to.equal(true);
    expect(limiter.take('a')).to.deep.equal({ ok: false, retryAfterSeconds: 10 });
    expect(limiter.take('b').ok, 'another network').to.equal(true);
    clock.advance(10_000);
    expect(limiter.take('a').ok, 'one earned back').to.equal(true);
    expect(limiter.take('a').ok).to.equal(false);
    expect(limiter.refused).to.equal(2);
  });

  it('takes nothing for a look-up that found a valid key, once however often it is given back', () => {
    const clock = new ManualClock(0);
    const limiter = new AuthFailureLimiter(clock, { burst: 2, perMinute: 0 });
    for (let n = 0; n < 100; n++) {
      const ticket = limiter.take('a');
      expect(ticket.ok, `valid look-up ${n}`).to.equal(true);
      if (ticket.ok) {
        ticket.refund();
        ticket.refund();
      }
    }
    expect([limiter.take('a').ok, limiter.take('a').ok, limiter.take('a').ok]).to.deep.equal([true, true, false]);
    // Without a refill rate, a spent network waits a minute before it is told to come back.
    expect(limiter.take('a')).to.deep.equal({ ok: false, retryAfterSeconds: 60 });
  });

  it('keeps a bounded number of networks, forgetting those with nothing spent first', () => {
    const clock = new ManualClock(0);
    const limiter = new AuthFailureLimiter(clock, { burst: 1, perMinute: 0 });
    expect(limiter.take('spent').ok).to.equal(true);
    // Networks that only ever found valid keys carry nothing: they make room without pushing "spent" out.
    for (let n = 0; n < 20_000; n++) {
      const ticket = limiter.take(`net-${n}`);
      if (ticket.ok) ticket.refund();
    }
    expect(limiter.take('spent').ok, 'still spent').to.equal(false);
  });
});
