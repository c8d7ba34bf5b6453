/**
 * Target safety on real loopback connections: every refused spelling of 127.0.0.2 (not allow-listed)
 * ends as `target_forbidden` and the listener on 127.0.0.2 never sees a connection; allow-listed
 * loopback targets are fetched.
 */
import { expect } from 'chai';
import { REBIND_HOST, startTestEngine, type TestEngine } from '../fixtures/engine';
import { startSentinel, type Sentinel } from '../fixtures/loopback';
import { startTargetSite, type TargetSite } from '../fixtures/target-site';
import { startFixtureServer, type FixtureServer } from '../helpers/fixtures';
import type { EngineResult } from '../../engine';

const failureKind = (result: EngineResult): string => (result.ok ? `ok ${result.status}` : result.error.kind);

describe('engine target safety on the network', () => {
  let sentinel: Sentinel;
  let site: TargetSite;
  let test: TestEngine;

  before(async () => {
    [sentinel, site] = await Promise.all([startSentinel('127.0.0.2'), startTargetSite()]);
    test = startTestEngine();
  });
  after(async () => {
    await test.engine.close();
    await Promise.all([sentinel.close(), site.close()]);
  });
  afterEach(() => expect(sentinel.connections, 'connections that reached 127.0.0.2').to.equal(0));

  const spellings = (port: number): string[] => [
    `http://127.0.0.2:${port}/`,
    `http://2130706434:${port}/`,
    `http://0x7f000002:${port}/`,
    `http://0177.0.0.2:${port}/`,
    `http://127.2:${port}/`,
    `http://[::ffff:127.0.0.2]:${port}/`,
    `http://[::ffff:7f00:2]:${port}/`,
    `http://${REBIND_HOST}:${port}/`,
    `http://${REBIND_HOST.toUpperCase()}.:${port}/`,
  ];

  it('refuses every spelling of a loopback address that is not allow-listed', async () => {
    for (const url of spellings(sentinel.port)) {
      expect(failureKind(await test.engine.fetch({ url })), url).to.equal('target_forbidden');
    }
  });

  it('refuses a redirect into 127.0.0.2, after fetching the allowed first hop', async () => {
    const before = site.requests.length;
    const result = await test.engine.fetch({ url: site.at(`/redirect-private?port=${sentinel.port}`) });
    expect(failureKind(result)).to.equal('target_forbidden');
    expect(result.ok ? undefined : result.error.url).to.equal(`http://127.0.0.2:${sentinel.port}/`);
    expect(site.requests.length - before).to.equal(1);
  });

  it('refuses redirects to the other spellings and to other schemes', async () => {
    const targets = [...spellings(sentinel.port), 'file:///etc/passwd', `ftp://127.0.0.1:${site.port}/`];
    for (const target of targets) {
      for (const status of [301, 307]) {
        const result = await test.engine.fetch({ url: site.at(`/redirect-to?status=${status}&url=${encodeURIComponent(target)}`) });
        expect(failureKind(result), `${status} → ${target}`).to.equal('target_forbidden');
      }
    }
  });

  it('refuses a POST redirected with 307 into 127.0.0.2 without sending its body anywhere', async () => {
    const result = await test.engine.fetch({
      url: site.at(`/redirect-to?status=307&url=${encodeURIComponent(`http://${REBIND_HOST}:${sentinel.port}/`)}`),
      method: 'POST',
      body: Buffer.from('secret=1'),
      headers: [['content-type', 'application/x-www-form-urlencoded']],
    });
    expect(failureKind(result)).to.equal('target_forbidden');
    expect(sentinel.bytes).to.equal(0);
  });

  it('fetches allow-listed loopback targets: by address, by name, and through an override name', async () => {
    for (const url of [site.at('/json'), `http://localhost:${site.port}/json`, `http://shop.fixture.test:${site.port}/json`, `http://fixture.test:${site.port}/json`]) {
      const result = await test.engine.fetch({ url });
      expect(failureKind(result), url).to.equal('ok 200');
    }
  });

  it('fetches ::1 when it is allow-listed, and refuses it when it is not', async () => {
    const v6: FixtureServer = await startFixtureServer((_req, res) => void res.end('v6'), { host: '::1' });
    const strict = startTestEngine({ TARGET_ALLOWLIST: '127.0.0.1' });
    try {
      const url = `http://[::1]:${v6.port}/`;
      const allowed = await test.engine.fetch({ url });
      expect(allowed.ok && allowed.body.toString()).to.equal('v6');
      const before = v6.requests.length;
      expect(failureKind(await strict.engine.fetch({ url }))).to.equal('target_forbidden');
      expect(failureKind(await strict.engine.fetch({ url: `http://localhost:${site.port}/` }))).to.equal('target_forbidden');
      expect(v6.requests.length).to.equal(before);
    } finally {
      await strict.engine.close();
      await v6.close();
    }
  });

  it('refuses loopback altogether when nothing is allow-listed', async () => {
    const strict = startTestEngine({ TARGET_ALLOWLIST: '' });
    try {
      const before = site.requests.length;
      for (const url of [site.at('/'), `http://shop.fixture.test:${site.port}/`]) {
        expect(failureKind(await strict.engine.fetch({ url })), url).to.equal('target_forbidden');
      }
      expect(site.requests.length).to.equal(before);
    } finally {
      await strict.engine.close();
    }
  });
});
