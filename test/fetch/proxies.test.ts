/**
 * Fetch with premium proxies, through an API app configured with a residential pool of fixture
 * proxies (two in the US, one SOCKS5 in Germany) and the stack's real database.
 */
import { expect } from 'chai';
import { startHttpProxy, type FixtureProxy } from '../fixtures/http-proxy';
import { startSocks5Proxy } from '../fixtures/socks5-proxy';
import { startTargetSite, type EchoReply, type TargetSite } from '../fixtures/target-site';
import { startApp, type TestApp } from '../helpers/app';
import { expectProblemCode, fetchAccount, fetchClient, type FetchClient } from './helpers';

describe('Fetch with premium proxies', () => {
  let site: TargetSite;
  let us1: FixtureProxy;
  let us2: FixtureProxy;
  let de: FixtureProxy;
  let app: TestApp;
  let client: FetchClient;

  const exitOf = async (response: Response): Promise<string> => ((await response.json()) as EchoReply).remoteAddress;

  before(async () => {
    [site, us1, us2, de] = await Promise.all([
      startTargetSite(),
      startHttpProxy({ name: 'us-1', country: 'us' }),
      startHttpProxy({ name: 'us-2', country: 'us' }),
      startSocks5Proxy({ name: 'de-1', country: 'de' }),
    ]);
    app = await startApp(undefined, { env: { PREMIUM_PROXIES: `us=${us1.url},us=${us2.url},de=${de.url}` } });
  });
  after(async () => {
    await app.close();
    await Promise.all([site, us1, us2, de].map((server) => server.close()));
  });
  beforeEach(async () => {
    client = fetchClient(app.url, await fetchAccount());
  });

  it('gets past a page that refuses direct visitors, charging 10 credits; the plain attempt is not charged', async () => {
    const direct = await expectProblemCode(await client.fetch({ url: site.at('/proxy-only') }));
    expect([direct.status, direct.code]).to.deep.equal([422, 'RESP001']);
    const proxied = await client.fetch({ url: site.at('/proxy-only'), premium_proxy: 'true' });
    expect(proxied.status).to.equal(200);
    expect(await proxied.text()).to.contain('welcome, visitor via');
    expect(proxied.headers.get('x-request-cost')).to.equal('10');
    expect(await client.used()).to.equal(10);
  });

  it('picks a proxy of the asked country, in either case', async () => {
    const german = await client.fetch({ url: site.at('/echo'), premium_proxy: 'true', proxy_country: 'DE' });
    expect(await exitOf(german)).to.equal(de.exitAddress);
    const american = await client.fetch({ url: site.at('/echo'), premium_proxy: 'true', proxy_country: 'us' });
    expect([us1.exitAddress, us2.exitAddress]).to.include(await exitOf(american));
  });

  it('keeps one proxy for a session_id across requests', async () => {
    const exits = new Set<string>();
    for (let attempt = 0; attempt < 6; attempt++) {
      exits.add(await exitOf(await client.fetch({ url: site.at('/echo'), premium_proxy: 'true', proxy_country: 'us', session_id: '4242' })));
    }
    expect(exits.size).to.equal(1);
    const rotating = new Set<string>();
    for (let attempt = 0; attempt < 8; attempt++) {
      rotating.add(await exitOf(await client.fetch({ url: site.at('/echo'), premium_proxy: 'true', proxy_country: 'us' })));
    }
    expect(rotating.size).to.equal(2);
  });

  it('answers RESP001 when no proxy serves the asked country, charging nothing', async () => {
    const failure = await expectProblemCode(await client.fetch({ url: site.at('/echo'), premium_proxy: 'true', proxy_country: 'fr' }));
    expect([failure.status, failure.code]).to.deep.equal([422, 'RESP001']);
    expect(await client.used()).to.equal(0);
  });
});
