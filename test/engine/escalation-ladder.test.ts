import { expect } from 'chai';
import { Agent, ProxyAgent, request as undiciRequest, type Dispatcher } from 'undici';
import type { RenderRequest } from '../../engine/browser';
import { createRungMemory, InMemoryDomainRungStore, runLadder, type LadderFailure, type LadderFetchers, type LadderSuccess, type Rung } from '../../engine/escalation';
import { useHarness } from '../fixtures/browser/harness';
import { startResidentialProxy, type ResidentialProxy } from '../fixtures/browser/site';

type Success = LadderSuccess & { via: string };

describe('mode=auto ladder with the real renderer and a plain fetcher', function () {
  const h = useHarness();
  let proxy: ResidentialProxy;
  // Fixture names resolve to loopback for the plain fetcher too.
  const direct = new Agent({
    connect: {
      lookup: (_host, options, callback) =>
        (options as { all?: boolean }).all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4),
    },
  });
  let residential: Dispatcher;
  const calls: string[] = [];

  before(async () => {
    proxy = await startResidentialProxy();
    residential = new ProxyAgent({ uri: proxy.url, token: `Basic ${Buffer.from(`${proxy.username}:${proxy.password}`).toString('base64')}`, proxyTunnel: false });
  });
  after(async () => {
    await residential.close();
    await direct.close();
    await proxy.close();
  });

  const fetchers: LadderFetchers<{ url: string }, Success, LadderFailure> = {
    async fetchPlain({ url }, rung: Rung) {
      calls.push(`plain:${rung.id}`);
      const verdict = await h.guard(new URL(url));
      if (!verdict.allowed) return { ok: false, error: { kind: 'target_forbidden', detail: verdict.reason } };
      const answer = await undiciRequest(url, { dispatcher: rung.premiumProxy ? residential : direct });
      const headers = Object.entries(answer.headers).map(([name, value]): [string, string] => [name, String(value)]);
      return { ok: true, status: answer.statusCode, headers, body: await answer.body.text(), via: rung.id };
    },
    async fetchRendered({ url }, rung: Rung) {
      calls.push(`rendered:${rung.id}`);
      const request: RenderRequest = { url, ...(rung.premiumProxy ? { proxy: { server: proxy.url, username: proxy.username, password: proxy.password } } : {}) };
      const result = await h.render(request);
      return result.ok ? { ok: true, status: result.status, headers: result.headers, html: result.html, via: rung.id } : { ok: false, error: result.error };
    },
  };
  const newMemory = () => createRungMemory(new InMemoryDomainRungStore(), { ttlMs: 3_600_000 });

  const expectations: Array<[string, string, string[]]> = [
    ['open', 'plain', ['plain']],
    ['spa', 'js_render', ['plain', 'js_render']],
    ['challenge', 'js_render', ['plain', 'js_render']],
    ['residential', 'premium_proxy', ['plain', 'premium_proxy']],
    ['fortress', 'js_render_premium_proxy', ['plain', 'premium_proxy', 'js_render_premium_proxy']],
  ];
  for (const [site, rungId, tried] of expectations) {
    it(`gets the ${site} site at rung ${rungId}, escalating only when blocked`, async () => {
      const result = await runLadder({ url: h.site.at('/', `${site}.fixture.test`) }, fetchers, newMemory());
      expect(result.ok, JSON.stringify(result)).to.equal(true);
      if (!result.ok) return;
      expect(result.rung.id).to.equal(rungId);
      expect(result.attempts.map((attempt) => attempt.rung)).to.deep.equal(tried);
      expect(result.attempts.slice(0, -1).every((attempt) => attempt.outcome === 'blocked')).to.equal(true);
      expect(String(result.result.html ?? result.result.body)).to.match(/id="?content"?/);
    });
  }

  it('remembers the rung that worked for the domain and starts there next time', async () => {
    const memory = newMemory();
    const first = await runLadder({ url: h.site.at('/', 'challenge.fixture.test') }, fetchers, memory);
    expect(first.ok && first.rung.id).to.equal('js_render');
    calls.length = 0;
    const second = await runLadder({ url: h.site.at('/other', 'challenge.fixture.test') }, fetchers, memory);
    expect(second.ok && second.rung.id).to.equal('js_render');
    expect(second.attempts.map((attempt) => attempt.rung)).to.deep.equal(['js_render']);
    expect(calls).to.deep.equal(['rendered:js_render']);
    expect(await memory.recall(h.site.at('/', 'www.fixture.test'))).to.deep.equal({ rung: 'js_render', stale: false });
  });

  it('answers RESP001 when every rung is blocked, having tried only rungs that could help', async () => {
    const result = await runLadder({ url: h.site.at('/status?code=403') }, fetchers, newMemory());
    expect(result.ok).to.equal(false);
    if (result.ok || result.reason !== 'exhausted') throw new Error('expected an exhausted ladder');
    expect(result.code).to.equal('RESP001');
    expect(result.detail).to.match(/js_render=true and premium_proxy=true/);
    expect(result.attempts.map((attempt) => [attempt.rung, attempt.outcome, attempt.status])).to.deep.equal([
      ['plain', 'blocked', 403],
      ['premium_proxy', 'blocked', 403],
      ['js_render_premium_proxy', 'blocked', 403],
    ]);
  });

  it('stops at once on a failure no configuration can fix', async () => {
    calls.length = 0;
    const result = await runLadder({ url: `${h.privateListener.origin}/` }, fetchers, newMemory());
    expect(result.ok).to.equal(false);
    if (result.ok || result.reason !== 'stopped') throw new Error('expected a stopped ladder');
    expect(result.failure.error.kind).to.equal('target_forbidden');
    expect(calls).to.deep.equal(['plain:plain']);
  });

  it('goes on when a memory store fails', async () => {
    const broken = createRungMemory(
      {
        get: () => Promise.reject(new Error('down')),
        put: () => Promise.reject(new Error('down')),
        delete: () => Promise.reject(new Error('down')),
        purgeExpired: () => Promise.reject(new Error('down')),
      },
      { ttlMs: 1_000 },
    );
    const result = await runLadder({ url: h.site.at('/', 'open.fixture.test') }, fetchers, broken);
    expect(result.ok && result.rung.id).to.equal('plain');
  });
});
