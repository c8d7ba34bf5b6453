/**
 * A robots.txt written to stall its reader: `Disallow: /*a*a*a*a*a*a*a*a*Z$` against a long path made a
 * backtracking regular expression freeze the API (and `/healthz` with it) for seconds to minutes. The
 * rules are matched in one pass now: the Fetch is answered by the rule, and the API answers meanwhile.
 */
import { expect } from 'chai';
import { startFixtureServer, type FixtureServer } from '../helpers/fixtures';
import { FIXTURE_DOMAIN, testStack } from '../helpers/stack';
import { expectProblemCode, fetchAccount, fetchClient } from '../fetch/helpers';
import { probeWhile } from './responsive';

const HOSTILE_ROBOTS = 'User-agent: *\nDisallow: /*a*a*a*a*a*a*a*a*Z$\n';

describe('hardening: a robots.txt that would backtrack', function () {
  let site: FixtureServer;
  before(async () => {
    site = await startFixtureServer(async (req, res) => {
      if (req.url === '/robots.txt') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(HOSTILE_ROBOTS);
        return;
      }
      // The page takes a while, so the API is asked for /healthz several times during the Fetch.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<html><body><p>${req.url}</p></body></html>`);
    });
  });
  after(() => site.close());

  it('answers a Fetch with respect_robots=true by the rule, and /healthz all along', async () => {
    const api = testStack().urls.api;
    const client = fetchClient(api, await fetchAccount());
    const origin = `http://hostile-robots.${FIXTURE_DOMAIN}:${site.port}`;
    const allowedPath = `/${'a'.repeat(64)}`;
    const { result: allowed, probes } = await probeWhile(api, client.fetch({ url: `${origin}${allowedPath}`, respect_robots: 'true' }, { signal: AbortSignal.timeout(90_000) }));
    expect(allowed.status, await allowed.clone().text()).to.equal(200);
    expect(await allowed.text()).to.contain(allowedPath);
    expect(probes.length, 'probes during the Fetch').to.be.at.least(3);
    expect(probes.filter((probe) => probe.status !== 200), JSON.stringify(probes)).to.deep.equal([]);

    const disallowedPath = `/${'a'.repeat(64)}Z`;
    const refused = await probeWhile(api, client.fetch({ url: `${origin}${disallowedPath}`, respect_robots: 'true' }, { signal: AbortSignal.timeout(90_000) }));
    expect((await expectProblemCode(refused.result)).code).to.equal('REQS009');
    expect(refused.probes.filter((probe) => probe.status !== 200), JSON.stringify(refused.probes)).to.deep.equal([]);
    expect(site.requests.map((request) => request.url)).to.not.include(disallowedPath);
    expect(site.requests.filter((request) => request.url === '/robots.txt'), 'robots.txt read once').to.have.length(1);
  });
});
