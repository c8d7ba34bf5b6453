import { expect } from 'chai';
import { billingOf, retryAfterMs } from '../../../activities/crawl/fetcher';
import { forEachLimited } from '../../../activities/crawl/pages';
import { HostGate } from '../../../activities/crawl/politeness';
import { Semaphore } from '../../../core/semaphore';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('crawls: politeness', () => {
  it('lets at most `perHost` requests run at once per host, other hosts apart', async () => {
    const gate = new HostGate(2, 0);
    let running = 0;
    let peak = 0;
    const visit = async (host: string) => {
      const leave = await gate.enter(host);
      running++;
      peak = Math.max(peak, running);
      await tick();
      running--;
      leave();
    };
    await Promise.all(Array.from({ length: 8 }, () => visit('a.fixture.test')));
    expect(peak).to.equal(2);
    peak = 0;
    await Promise.all([visit('a.fixture.test'), visit('a.fixture.test'), visit('b.fixture.test'), visit('c.fixture.test')]);
    expect(peak).to.equal(4);
  });

  it('spaces request starts by the delay and honours a pause (Retry-After)', async () => {
    // The gate's own clock, moved by the test: starts are read on it, so nothing depends on the machine's speed.
    let now = 1_000;
    const gate = new HostGate(10, 30, () => now);
    const starts: number[] = [];
    const entered = Array.from({ length: 3 }, async () => {
      const leave = await gate.enter('slow.fixture.test');
      starts.push(now);
      leave();
    });
    // Time passes only between turns of the event loop, a millisecond of the gate's clock at a time.
    const ticking = (async () => {
      while (starts.length < 3) {
        now += 1;
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    await Promise.all([...entered, ticking]);
    expect((starts[1] as number) - (starts[0] as number)).to.be.at.least(30);
    expect((starts[2] as number) - (starts[1] as number)).to.be.at.least(30);

    const paused = now;
    gate.pause('busy.fixture.test', 100);
    let startedAt: number | undefined;
    const busy = gate.enter('busy.fixture.test').then((leave) => {
      startedAt = now;
      leave();
    });
    while (startedAt === undefined) {
      now += 1;
      await new Promise((resolve) => setImmediate(resolve));
    }
    await busy;
    expect(startedAt - paused).to.be.at.least(100);
  });

  it('shares a crawl limit between slices and stops starting work when told', async () => {
    const limit = new Semaphore(3);
    let running = 0;
    let peak = 0;
    const work = async () => {
      const release = await limit.acquire();
      running++;
      peak = Math.max(peak, running);
      await tick();
      running--;
      release();
    };
    await Promise.all([forEachLimited([1, 2, 3, 4, 5], 3, async () => false, work), forEachLimited([1, 2, 3, 4, 5], 3, async () => false, work)]);
    expect(peak).to.equal(3);
    expect(limit.idle).to.equal(true);
    let done = 0;
    const started = await forEachLimited([1, 2, 3, 4, 5, 6], 2, async () => done >= 2, async () => {
      await tick();
      done++;
    });
    expect(started).to.be.within(2, 3);
  });

  it('reads Retry-After and the billing of a status', () => {
    expect(retryAfterMs(429, [['retry-after', '3']])).to.equal(3000);
    const now = Date.parse('2026-11-01T12:00:00Z');
    expect(retryAfterMs(503, [['Retry-After', new Date(now + 10_000).toUTCString()]], now)).to.equal(10_000);
    expect(retryAfterMs(503, [['Retry-After', new Date(now - 10_000).toUTCString()]], now)).to.equal(0);
    expect(retryAfterMs(200, [['retry-after', '3']])).to.equal(undefined);
    expect(retryAfterMs(503, [])).to.equal(undefined);
    expect(billingOf(200)).to.deep.equal({ billable: true, failed: false });
    expect(billingOf(301)).to.deep.equal({ billable: true, failed: false });
    expect(billingOf(404)).to.deep.equal({ billable: true, failed: true });
    expect(billingOf(410)).to.deep.equal({ billable: true, failed: true });
    expect(billingOf(403)).to.deep.equal({ billable: false, failed: true });
    expect(billingOf(500)).to.deep.equal({ billable: false, failed: true });
  });
});
