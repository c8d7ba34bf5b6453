/**
 * The settle rule after load (engine/browser/quiet.ts, pending-probe.ts) through the running service:
 * late content is returned with js_render and no `wait`; long polls, beacon loops, ticking clocks,
 * carousels, animation-frame loops, CSS animations and infinite scroll do not hold a page (it ends
 * `idle`, never at the cap); a page with nothing pending is taken at load; `wait` counts toward the
 * settle instead of being added after it; json_response's `settled_by` and `settle_ms` say so.
 */
import { expect } from 'chai';
import { LATE_PAGES, RESTLESS_PAGES, STILL_PAGES, startCompletenessSite } from '../fixtures/browser/completeness';
import { fetchAccount, fetchClient, type FetchClient } from '../fetch/helpers';
import { testStack } from '../helpers/stack';

/** RENDER_SETTLE_CAP_MS's default: what a page that never had nothing pending would take. */
const CAP_MS = 3_000;

describe('browser renders: waiting for what scripts add', function () {
  this.timeout(120_000);
  let site: Awaited<ReturnType<typeof startCompletenessSite>>;
  let client: FetchClient;

  before(async () => {
    site = await startCompletenessSite();
    client = fetchClient(testStack().urls.api, await fetchAccount());
  });
  after(async () => site.close());

  const render = async (name: string, extra: Record<string, string> = {}) => {
    const response = await client.fetch({ url: site.at(name), js_render: 'true', json_response: 'true', ...extra });
    expect(response.status, name).to.equal(200);
    return (await response.json()) as { html: string; settled_by: string; settle_ms: number };
  };

  for (const name of Object.keys(LATE_PAGES)) {
    it(`returns the content ${name} adds after load, with no wait asked`, async () => {
      const answer = await render(name);
      expect(answer.html).to.contain(`EARLY:${name}`);
      expect(answer.html).to.contain(`LATE:${name}`);
      expect(answer.settled_by).to.equal('idle');
    });
  }

  for (const name of Object.keys(RESTLESS_PAGES)) {
    it(`does not hold the ${name} page, which never goes still, to the cap`, async () => {
      const answer = await render(name);
      expect(answer.html).to.contain(`EARLY:${name}`);
      expect(answer.settled_by).to.equal('idle');
      // A long poll is let go once it is older than content is waited for (1.5 s); the others at once.
      expect(answer.settle_ms).to.be.below(name === 'longpoll' ? 2_000 : CAP_MS / 3);
      // Infinite scroll adds only when someone scrolls: nothing waits for it.
      if (name === 'scroll') expect(answer.html).to.not.contain('LATE:scroll');
      if (['ticker', 'clock', 'carousel', 'raf'].includes(name)) expect(answer.html).to.match(/TICK:[\w:.-]+/);
    });
  }

  it('takes a page with nothing pending after load at load', async () => {
    for (const name of Object.keys(STILL_PAGES)) {
      const answer = await render(name);
      expect(answer.html).to.contain(`EARLY:${name}`);
      expect(answer.settled_by).to.equal('idle');
      expect(answer.settle_ms).to.be.at.most(50);
    }
  });

  it('counts wait=300 toward the settle: a still page is taken 300 ms after load, not later', async () => {
    const answer = await render('nothing', { wait: '300' });
    expect(answer.settled_by).to.equal('idle');
    expect(answer.settle_ms).to.be.at.least(300);
    expect(answer.settle_ms).to.be.below(350);
  });

  it('counts wait toward the settle on a late page too: the wait and the content overlap', async () => {
    const answer = await render('timer-500', { wait: '300' });
    expect(answer.html).to.contain('LATE:timer-500');
    // The timer was set before load: its content comes under 500 ms after it, not 300 + 500.
    expect(answer.settle_ms).to.be.at.least(300);
    expect(answer.settle_ms).to.be.below(700);
  });

  it('waits for a wait_for selector alongside the settle, and settles what came with it', async () => {
    const answer = await render('timer-1500', { wait_for: '#late p' });
    expect(answer.html).to.contain('LATE:timer-1500');
    expect(answer.settled_by).to.equal('idle');
  });
});
