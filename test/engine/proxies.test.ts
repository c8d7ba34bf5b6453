/**
 * Fetches through real fixture proxies on loopback (two HTTP proxies, one SOCKS5 proxy, each with its
 * own exit address): choice by country, session stickiness, failover past dead and broken proxies,
 * and the target check still applied before anything is handed to a proxy.
 */
import { expect } from 'chai';
import { freePort } from '../helpers/ports';
import { REBIND_HOST, startTestEngine, type TestEngine } from '../fixtures/engine';
import { startHttpProxy, type FixtureProxy } from '../fixtures/http-proxy';
import { startSocks5Proxy } from '../fixtures/socks5-proxy';
import { startSentinel, type Sentinel } from '../fixtures/loopback';
import { startTargetSite, type EchoReply, type TargetSite } from '../fixtures/target-site';
import { startTlsSite } from '../fixtures/tls-site';
import { FAILURES, type EngineRequest, type EngineResult } from '../../engine';

const kind = (result: EngineResult): string => (result.ok ? `ok ${result.status}` : result.error.kind);

function exitOf(result: EngineResult): string {
  if (!result.ok) throw new Error(`expected a response, got ${result.error.kind}: ${result.error.detail}`);
  return (JSON.parse(result.body.toString('utf8')) as EchoReply).remoteAddress;
}

describe('engine proxies', () => {
  let site: TargetSite;
  let sentinel: Sentinel;
  let us1: FixtureProxy;
  let us2: FixtureProxy;
  let de: FixtureProxy;
  const started: TestEngine[] = [];

  const engineWith = (env: Record<string, string>): TestEngine => {
    const test = startTestEngine({ PROXY_REST_MS: '60000', ...env });
    started.push(test);
    return test;
  };
  const premiumPool = (): string => `us=${us1.url},us=${us2.url},de=${de.url}`;

  before(async () => {
    [site, sentinel, us1, us2, de] = await Promise.all([
      startTargetSite(),
      startSentinel('127.0.0.2'),
      startHttpProxy({ name: 'us-1', country: 'us' }),
      startHttpProxy({ name: 'us-2', country: 'us' }),
      startSocks5Proxy({ name: 'de-1', country: 'de' }),
    ]);
  });
  after(async () => {
    await Promise.all(started.map((test) => test.engine.close()));
    await Promise.all([site, sentinel, us1, us2, de].map((server) => server.close()));
  });
  afterEach(() => expect(sentinel.connections, 'connections that reached 127.0.0.2').to.equal(0));

  it('answers 403 on the proxy-only page when direct, 200 through a premium proxy', async () => {
    const { engine } = engineWith({ PREMIUM_PROXIES: premiumPool() });
    const direct = await engine.fetch({ url: site.at('/proxy-only') });
    expect(kind(direct)).to.equal('ok 403');
    const proxied = await engine.fetch({ url: site.at('/proxy-only'), premiumProxy: true });
    expect(kind(proxied)).to.equal('ok 200');
    expect(proxied.ok && proxied.proxy?.id).to.match(/^premium-\d$/);
  });

  it('picks proxies of the requested country only', async () => {
    const { engine } = engineWith({ PREMIUM_PROXIES: premiumPool() });
    const deRecords = de.records.length;
    const exits = new Set<string>();
    for (let index = 0; index < 4; index++) {
      const result = await engine.fetch({ url: site.at(`/echo?us=${index}`), premiumProxy: true, proxyCountry: 'US' });
      expect(result.ok && result.proxy?.country).to.equal('us');
      exits.add(exitOf(result));
    }
    expect([...exits].sort()).to.deep.equal([us1.exitAddress, us2.exitAddress].sort());
    expect(de.records.length).to.equal(deRecords);

    const socks = await engine.fetch({ url: site.at('/echo?de'), premiumProxy: true, proxyCountry: 'de' });
    expect(exitOf(socks)).to.equal(de.exitAddress);
    expect(socks.ok && socks.proxy).to.deep.equal({ id: 'premium-3', country: 'de' });
    expect(de.records.at(-1)).to.include({ mode: 'socks5', authorized: true });
  });

  it('keeps one exit for one session id across requests, and rotates without one', async () => {
    const { engine } = engineWith({ PREMIUM_PROXIES: premiumPool() });
    const ask = (extra: Partial<EngineRequest>): Promise<EngineResult> =>
      engine.fetch({ url: site.at('/echo'), premiumProxy: true, proxyCountry: 'us', ...extra });
    const pinned = exitOf(await ask({ sessionId: 12345 }));
    for (let index = 0; index < 4; index++) {
      await ask({});
      expect(exitOf(await ask({ sessionId: 12345 }))).to.equal(pinned);
    }
    const rotating = new Set<string>();
    for (let index = 0; index < 4; index++) rotating.add(exitOf(await ask({})));
    expect(rotating.size).to.equal(2);
  });

  it('rests a dead proxy and fetches through the next one', async () => {
    const deadPort = await freePort();
    const { engine, lines } = engineWith({ PREMIUM_PROXIES: `us=http://u:p@127.0.0.1:${deadPort},us=${us1.url}` });
    const first = await engine.fetch({ url: site.at('/echo?failover'), premiumProxy: true, proxyCountry: 'us' });
    expect(exitOf(first)).to.equal(us1.exitAddress);
    expect(first.ok && first.proxy?.id).to.equal('premium-2');
    const rests = (): number => lines.filter((line) => line.includes('proxy failed; resting it')).length;
    expect(rests()).to.equal(1);
    for (let index = 0; index < 3; index++) {
      expect(exitOf(await engine.fetch({ url: site.at('/echo'), premiumProxy: true, proxyCountry: 'us' }))).to.equal(us1.exitAddress);
    }
    expect(rests(), 'the dead proxy rests instead of being tried again').to.equal(1);
  });

  it('rests proxies that refuse the tunnel or the credentials', async () => {
    const broken = await startHttpProxy({ name: 'broken', country: 'us', tunnelStatus: 503 });
    const wrongPassword = us2.url.replace(':secret@', ':wrong@');
    try {
      for (const [bad, record] of [
        [broken, { mode: 'connect', refused: 503 }],
        [us2, { mode: 'connect', authorized: false, refused: 407 }],
      ] as const) {
        // The first entry of a fresh pool is tried first.
        const { engine, lines } = engineWith({ PREMIUM_PROXIES: `us=${bad === us2 ? wrongPassword : bad.url},us=${us1.url}` });
        const result = await engine.fetch({ url: site.at('/echo?broken'), premiumProxy: true, proxyCountry: 'us' });
        expect(exitOf(result)).to.equal(us1.exitAddress);
        expect(bad.records.at(-1)).to.include(record);
        expect(lines.filter((line) => line.includes('proxy failed; resting it'))).to.have.length(1);
      }
    } finally {
      await broken.close();
    }
  });

  it('fails with proxy_failed after the configured attempts when every proxy is dead', async () => {
    const ports = await Promise.all([freePort(), freePort(), freePort()]);
    const { engine } = engineWith({ PROXIES: ports.map((port) => `http://u:p@127.0.0.1:${port}`).join(','), PROXY_ATTEMPTS: '2' });
    const result = await engine.fetch({ url: site.at('/') });
    expect(kind(result)).to.equal('proxy_failed');
    if (!result.ok) expect(FAILURES[result.error.kind]).to.deep.include({ code: 'RESP001', blame: 'service' });
  });

  it('sends plain requests through the plain pool and leaves the premium pool alone', async () => {
    const { engine } = engineWith({ PROXIES: us2.url, PREMIUM_PROXIES: `de=${de.url}` });
    const deRecords = de.records.length;
    const result = await engine.fetch({ url: site.at('/echo?plain') });
    expect(exitOf(result)).to.equal(us2.exitAddress);
    expect(result.ok && result.proxy?.id).to.equal('plain-1');
    expect(de.records.length).to.equal(deRecords);
  });

  it('refuses premium requests it cannot route', async () => {
    const none = engineWith({});
    expect(kind(await none.engine.fetch({ url: site.at('/'), premiumProxy: true }))).to.equal('proxy_unavailable');
    const usOnly = engineWith({ PREMIUM_PROXIES: `us=${us1.url}` });
    expect(kind(await usOnly.engine.fetch({ url: site.at('/'), premiumProxy: true, proxyCountry: 'jp' }))).to.equal('proxy_unavailable');
  });

  it('blames the target, not the proxy, when a SOCKS5 proxy cannot reach it', async () => {
    const closedPort = await freePort();
    const { engine, lines } = engineWith({ PREMIUM_PROXIES: `de=${de.url}` });
    const result = await engine.fetch({ url: `http://127.0.0.1:${closedPort}/`, premiumProxy: true });
    expect(kind(result)).to.equal('connect_failed');
    expect(de.records.at(-1)).to.include({ target: `127.0.0.1:${closedPort}`, refused: 5 });
    expect(lines.filter((line) => line.includes('resting'))).to.have.length(0);
    expect(kind(await engine.fetch({ url: site.at('/'), premiumProxy: true }))).to.equal('ok 200');
  });

  it('tunnels https targets and blames the target for an untrusted certificate', async () => {
    const tls = await startTlsSite();
    try {
      const { engine, lines } = engineWith({ PREMIUM_PROXIES: `us=${us1.url},de=${de.url}` });
      for (const country of ['us', 'de']) {
        const result = await engine.fetch({ url: `https://shop.fixture.test:${tls.port}/`, premiumProxy: true, proxyCountry: country });
        expect(kind(result), country).to.equal('tls_failed');
      }
      expect(us1.records.at(-1)).to.include({ mode: 'connect', target: `127.0.0.1:${tls.port}` });
      expect(de.records.at(-1)).to.include({ mode: 'socks5', target: `127.0.0.1:${tls.port}` });
      expect(lines.filter((line) => line.includes('resting'))).to.have.length(0);
      expect(tls.requests).to.equal(0);
    } finally {
      await tls.close();
    }
  });

  it('checks targets before handing them to a proxy', async () => {
    const { engine } = engineWith({ PREMIUM_PROXIES: premiumPool() });
    const counts = (): number[] => [us1, us2, de].map((proxy) => proxy.records.length);
    const before = counts();
    for (const country of ['us', 'de']) {
      for (const url of [`http://127.0.0.2:${sentinel.port}/`, `http://2130706434:${sentinel.port}/`, `http://${REBIND_HOST}:${sentinel.port}/`]) {
        expect(kind(await engine.fetch({ url, premiumProxy: true, proxyCountry: country })), `${country} ${url}`).to.equal('target_forbidden');
      }
    }
    expect(counts()).to.deep.equal(before);
    const redirected = await engine.fetch({ url: site.at(`/redirect-private?port=${sentinel.port}`), premiumProxy: true, proxyCountry: 'de' });
    expect(kind(redirected)).to.equal('target_forbidden');
  });

  it('sends override names to the proxy as their checked address, with the name as Host', async () => {
    const { engine } = engineWith({ PREMIUM_PROXIES: `us=${us1.url}` });
    const result = await engine.fetch({ url: `http://shop.fixture.test:${site.port}/echo`, premiumProxy: true });
    const reply = result.ok ? (JSON.parse(result.body.toString()) as EchoReply) : undefined;
    expect(reply?.headers['host']).to.equal(`shop.fixture.test:${site.port}`);
    expect(us1.records.at(-1)?.target).to.equal(`127.0.0.1:${site.port}`);
    expect(result.ok && result.finalUrl).to.equal(`http://shop.fixture.test:${site.port}/echo`);
  });
});
