/**
 * The settle rule after load (engine/browser/quiet.ts) through the running service: late content is
 * returned with js_render and no `wait`; long polls, beacon loops, animations and infinite scroll do
 * not hold a page (it ends by `quiet`, never by the cap); a page that keeps changing ends by the cap;
 * json_response's `settled_by` says which.
 */
import { expect } from 'chai';
import { LATE_PAGES, NEVER_QUIET_PAGES, RESTLESS_PAGES, startCompletenessSite } from '../fixtures/browser/completeness';
import { fetchAccount, fetchClient, type FetchClient } from '../fetch/helpers';
import { testStack } from '../helpers/stack';

describe('browser renders: waiting for what scripts add', function () {
  this.timeout(120_000);
  let site: Awaited<ReturnType<typeof startCompletenessSite>>;
  let client: FetchClient;

  before(async () => {
    site = await startCompletenessSite();
    client = fetchClient(testStack().urls.api, await fetchAccount());
  });
  after(async () => site.close());

  const render = async (name: string) => {
    const response = await client.fetch({ url: site.at(name), js_render: 'true', json_response: 'true' });
    expect(response.status, name).to.equal(200);
    return (await response.json()) as { html: string; settled_by: string };
  };

  for (const name of Object.keys(LATE_PAGES)) {
    it(`returns the content ${name} adds after load, with no wait asked`, async () => {
      const answer = await render(name);
      expect(answer.html).to.contain(`EARLY:${name}`);
      expect(answer.html).to.contain(`LATE:${name}`);
      expect(answer.settled_by).to.equal('quiet');
    });
  }

  for (const name of Object.keys(RESTLESS_PAGES)) {
    it(`does not hold the ${name} page to the cap`, async () => {
      const answer = await render(name);
      expect(answer.html).to.contain(`EARLY:${name}`);
      expect(answer.settled_by).to.equal('quiet');
      // Infinite scroll adds only when someone scrolls: nothing waits for it.
      if (name === 'scroll') expect(answer.html).to.not.contain('LATE:scroll');
    });
  }

  for (const name of Object.keys(NEVER_QUIET_PAGES)) {
    it(`takes the ${name} page, whose content never stops changing, at the cap and says so`, async () => {
      const answer = await render(name);
      expect(answer.html).to.contain(`EARLY:${name}`);
      expect(answer.html).to.match(/TICK:\d+/);
      expect(answer.settled_by).to.equal('cap');
    });
  }
});
