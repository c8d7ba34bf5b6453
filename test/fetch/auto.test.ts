/**
 * `mode=auto` through an API app whose residential pool is a fixture proxy: each site succeeds at the
 * configuration it needs, is billed exactly that configuration's credits, and the next request to the
 * same domain starts where the last one succeeded.
 *
 * Each site has its own registrable domain (the rung memory is per domain):
 *   open.test        anyone gets the page                                  → plain, 1
 *   challenge.test   a challenge page unless JavaScript ran                 → js_render, 5
 *   resident.test    403 unless the request left through the proxy          → premium_proxy, 10
 *   fortress.test    both                                                   → js_render + premium_proxy, 25
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect } from 'chai';
import { startHttpProxy, type FixtureProxy } from '../fixtures/http-proxy';
import { startFixtureServer, type FixtureServer } from '../helpers/fixtures';
import { startApp, type TestApp } from '../helpers/app';
import { expectProblemCode, fetchAccount, fetchClient, type FetchClient } from './helpers';

const ARTICLE = (who: string) =>
  `<!doctype html><html><head><title>article</title></head><body><main><h1>Welcome, ${who}</h1><p>${'Real content. '.repeat(30)}</p></main></body></html>`;
const CHALLENGE = `<!doctype html><html><head><title>Just a moment...</title></head><body><p>Checking your browser before accessing the site.</p>
<script>document.cookie = "clearance=ok; path=/"; location.reload();</script></body></html>`;

describe('Fetch with mode=auto', () => {
  let proxy: FixtureProxy;
  let site: FixtureServer;
  let app: TestApp;
  let client: FetchClient;
  const plainHits: string[] = [];
  const slowHits: string[] = [];

  const at = (domain: string) => `http://www.${domain}:${site.port}/page`;

  before(async () => {
    proxy = await startHttpProxy({ name: 'resident', country: 'us' });
    site = await startFixtureServer((req: IncomingMessage, res: ServerResponse) => {
      const host = (req.headers.host ?? '').split(':')[0] ?? '';
      const viaProxy = req.socket.remoteAddress === proxy.exitAddress;
      const ranScripts = (req.headers.cookie ?? '').includes('clearance=ok');
      if (/Windows NT/.test(req.headers['user-agent'] ?? '')) plainHits.push(host);
      const send = (status: number, body: string) => {
        res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
        res.end(body);
      };
      if (host.endsWith('open.test') || host.endsWith('decay.test')) return send(200, ARTICLE('anyone'));
      if (host.endsWith('challenge.test')) return ranScripts ? send(200, ARTICLE('browser')) : send(503, CHALLENGE);
      if (host.endsWith('resident.test')) return viaProxy ? send(200, ARTICLE('resident')) : send(403, '<h1>Forbidden</h1>');
      if (host.endsWith('fortress.test')) {
        if (!viaProxy) return send(403, '<h1>Forbidden</h1>');
        return ranScripts ? send(200, ARTICLE('resident browser')) : send(503, CHALLENGE);
      }
      if (host.endsWith('blocked.test')) return send(403, '<h1>Forbidden</h1><p>Nobody gets in.</p>');
      if (host.endsWith('slow.test')) {
        slowHits.push(req.headers['user-agent'] ?? '');
        setTimeout(() => send(200, ARTICLE('patient')), 3_000);
        return;
      }
      return send(404, 'no such site');
    });
    app = await startApp(undefined, {
      env: {
        PREMIUM_PROXIES: `us=${proxy.url}`,
        HOST_OVERRIDES: '*.open.test=127.0.0.1,*.challenge.test=127.0.0.1,*.resident.test=127.0.0.1,*.fortress.test=127.0.0.1,*.blocked.test=127.0.0.1',
      },
    });
  });
  after(async () => {
    await app.close();
    await site.close();
    await proxy.close();
  });
  beforeEach(async () => {
    client = fetchClient(app.url, await fetchAccount());
  });

  const cases: Array<[string, string, number]> = [
    ['open.test', 'js_render=false&premium_proxy=false', 1],
    ['challenge.test', 'js_render=true&premium_proxy=false', 5],
    ['resident.test', 'js_render=false&premium_proxy=true', 10],
    ['fortress.test', 'js_render=true&premium_proxy=true', 25],
  ];
  for (const [domain, configuration, credits] of cases) {
    it(`gets ${domain} with ${configuration}, billed ${credits}`, async () => {
      const response = await client.fetch({ url: at(domain), mode: 'auto' });
      expect(response.status, await response.clone().text()).to.equal(200);
      expect(await response.text()).to.contain('Welcome');
      expect(response.headers.get('x-auto-configuration')).to.equal(configuration);
      expect(response.headers.get('x-request-cost')).to.equal(String(credits));
      expect(await client.used()).to.equal(credits);
    });
  }

  it('starts the next request to a domain at the configuration that last worked', async () => {
    plainHits.length = 0;
    const response = await client.fetch({ url: `http://shop.challenge.test:${site.port}/other`, mode: 'auto' });
    expect(response.status).to.equal(200);
    expect(response.headers.get('x-auto-configuration')).to.equal('js_render=true&premium_proxy=false');
    expect(plainHits, 'plain attempts').to.deep.equal([]);
    expect(await client.used()).to.equal(5);
  });

  it('answers RESP001 when every configuration is blocked, charging nothing', async () => {
    const failure = await expectProblemCode(await client.fetch({ url: `http://www.blocked.test:${site.port}/page`, mode: 'auto' }));
    expect([failure.status, failure.code]).to.deep.equal([422, 'RESP001']);
    expect(failure.detail).to.match(/js_render=true and premium_proxy=true|mode=auto/);
    expect(await client.used()).to.equal(0);
  });

  it('stops escalating when the account cannot pay for the next configuration', async () => {
    const poor = fetchClient(app.url, await fetchAccount({ credits: 3 }));
    const failure = await expectProblemCode(await poor.fetch({ url: `http://www.fortress.test:${site.port}/new`, mode: 'auto' }));
    expect([failure.status, failure.code]).to.deep.equal([402, 'AUTH004']);
    expect(await poor.used()).to.equal(0);
  });

  describe('on a service without premium proxies', () => {
    let bare: TestApp;
    before(async () => {
      bare = await startApp(undefined, {
        env: {
          PREMIUM_PROXIES: '',
          FETCH_TOTAL_TIMEOUT_MS: '1000',
          HOST_OVERRIDES: '*.open.test=127.0.0.1,*.resident.test=127.0.0.1,*.fortress.test=127.0.0.1,*.slow.test=127.0.0.1,*.decay.test=127.0.0.1',
        },
      });
    });
    after(async () => bare.close());

    const rungs = () => bare.deps.db.db.collection<{ _id: string; rung: string; updated_at: Date; expires_at: Date }>('domain_rungs');

    it('never tries nor bills a configuration with premium proxies, even one remembered for the domain', async () => {
      const poorClient = fetchClient(bare.url, await fetchAccount());
      const forwardedBefore = proxy.records.length;
      // Remembered from a time (or a process) that had premium proxies.
      const now = Date.now();
      await rungs().replaceOne({ _id: 'open.test' }, { rung: 'js_render_premium_proxy', updated_at: new Date(now), expires_at: new Date(now + 3_600_000) }, { upsert: true });
      const open = await poorClient.fetch({ url: at('open.test'), mode: 'auto' });
      expect(open.status).to.equal(200);
      expect(open.headers.get('x-auto-configuration')).to.equal('js_render=false&premium_proxy=false');
      expect(open.headers.get('x-request-cost')).to.equal('1');
      const resident = await expectProblemCode(await poorClient.fetch({ url: at('resident.test'), mode: 'auto' }));
      expect([resident.status, resident.code]).to.deep.equal([422, 'RESP001']);
      expect(proxy.records.length).to.equal(forwardedBefore);
      expect(await poorClient.used()).to.equal(1);
    });

    it('answers premium_proxy=true with a non-retryable REQS004, after the target policy', async () => {
      const poorClient = fetchClient(bare.url, await fetchAccount());
      const refused = await expectProblemCode(await poorClient.fetch({ url: at('open.test'), premium_proxy: 'true' }));
      expect([refused.status, refused.code, refused.parameter]).to.deep.equal([400, 'REQS004', 'premium_proxy']);
      const metadata = await expectProblemCode(await poorClient.fetch({ url: 'http://169.254.169.254/latest/', premium_proxy: 'true' }));
      expect([metadata.status, metadata.code]).to.deep.equal([400, 'REQS001']);
      expect(await poorClient.used()).to.equal(0);
    });

    it('takes a time-out as no evidence of a block: no dearer configuration, nothing remembered', async () => {
      const poorClient = fetchClient(bare.url, await fetchAccount());
      slowHits.length = 0;
      const failure = await expectProblemCode(await poorClient.fetch({ url: at('slow.test'), mode: 'auto' }));
      expect(failure.code).to.equal('CTX0002');
      expect(slowHits).to.have.length(1);
      expect(await rungs().findOne({ _id: 'slow.test' })).to.equal(null);
      expect(await poorClient.used()).to.equal(0);
    });

    it('re-tests a remembered rung one rung down once it is past half its life, and keeps the cheaper one', async () => {
      const poorClient = fetchClient(bare.url, await fetchAccount());
      const now = Date.now();
      const ttl = 1_440 * 60_000;
      // js_render remembered most of a day ago: the domain no longer needs it.
      await rungs().replaceOne({ _id: 'decay.test' }, { rung: 'js_render', updated_at: new Date(now - 0.75 * ttl), expires_at: new Date(now + 0.25 * ttl) }, { upsert: true });
      const response = await poorClient.fetch({ url: `http://www.decay.test:${site.port}/page`, mode: 'auto' });
      expect(response.status).to.equal(200);
      expect(response.headers.get('x-auto-configuration')).to.equal('js_render=false&premium_proxy=false');
      expect(await poorClient.used()).to.equal(1);
      expect((await rungs().findOne({ _id: 'decay.test' }))?.rung).to.equal('plain');
    });
  });
});
