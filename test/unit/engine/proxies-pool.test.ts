/**
 * The proxy choice on its own (no network: dispatchers are stubs that are never used): pools and
 * countries, rotation, session pins and their expiry, rests after failures, the bounded pin map.
 */
import { expect } from 'chai';
import type { Dispatcher } from 'undici';
import { loadConfig } from '../../../base/config';
import { createProxyPools, type ProxyChoiceRequest, type ProxyPools } from '../../../engine/proxies/pool';
import { createSessionPins, SESSION_TTL_MS } from '../../../engine/proxies/sessions';

const stubDispatcher = (): Dispatcher => ({ close: async () => undefined }) as unknown as Dispatcher;

function pools(env: Record<string, string>, clock: { now: number }): ProxyPools {
  return createProxyPools({
    config: loadConfig(env),
    dispatcherOptions: { connectTimeoutMs: 1000, headersTimeoutMs: 1000, bodyTimeoutMs: 1000 },
    now: () => clock.now,
    createDispatcher: stubDispatcher,
  });
}

const request = (fields: Partial<ProxyChoiceRequest> = {}): ProxyChoiceRequest => ({ premium: true, exclude: new Set(), ...fields });

function pick(pool: ProxyPools, fields: Partial<ProxyChoiceRequest> = {}): string {
  const choice = pool.choose(request(fields));
  if (!choice.ok) return `refused: ${choice.reason}`;
  return choice.proxy?.id ?? 'direct';
}

const PREMIUM = 'us=http://u:p@127.0.0.1:9001,us=http://u:p@127.0.0.1:9002,de=socks5://u:p@127.0.0.1:9003,http://u:p@127.0.0.1:9004';

describe('engine proxy choice (no network)', () => {
  it('goes direct for plain requests when the plain pool is empty, and refuses premium without a pool', () => {
    const pool = pools({}, { now: 0 });
    expect(pick(pool, { premium: false })).to.equal('direct');
    expect(pick(pool)).to.equal('refused: no premium proxies are configured');
  });

  it('filters the premium pool by country, in any case, and refuses a country it lacks', () => {
    const pool = pools({ PREMIUM_PROXIES: PREMIUM }, { now: 0 });
    const us = new Set([pick(pool, { country: 'us' }), pick(pool, { country: 'US' }), pick(pool, { country: 'Us' })]);
    expect([...us].sort()).to.deep.equal(['premium-1', 'premium-2']);
    expect(pick(pool, { country: 'DE' })).to.equal('premium-3');
    expect(pick(pool, { country: 'fr' })).to.equal('refused: no premium proxy for country "fr"');
  });

  it('uses the plain pool for plain requests and ignores the country there', () => {
    const pool = pools({ PROXIES: 'http://u:p@127.0.0.1:9101', PREMIUM_PROXIES: PREMIUM }, { now: 0 });
    expect(pick(pool, { premium: false, country: 'de' })).to.equal('plain-1');
  });

  it('pins a session to one proxy for ten minutes, per pool and country', () => {
    const clock = { now: 1_000 };
    const pool = pools({ PREMIUM_PROXIES: PREMIUM }, clock);
    const first = pick(pool, { country: 'us', sessionId: 42 });
    for (let index = 0; index < 5; index++) {
      pick(pool, { country: 'us' }); // rotation moves on for others
      expect(pick(pool, { country: 'us', sessionId: 42 })).to.equal(first);
    }
    expect(pick(pool, { country: 'de', sessionId: 42 })).to.equal('premium-3');
    clock.now += SESSION_TTL_MS - 1;
    expect(pick(pool, { country: 'us', sessionId: 42 })).to.equal(first);
  });

  it('forgets a pin after ten minutes', () => {
    const clock = { now: 0 };
    const pool = pools({ PREMIUM_PROXIES: 'us=http://u:p@127.0.0.1:9001,us=http://u:p@127.0.0.1:9002' }, clock);
    expect(pick(pool, { country: 'us', sessionId: 'a' })).to.equal('premium-1');
    expect(pick(pool, { country: 'us', sessionId: 'a' })).to.equal('premium-1');
    clock.now += SESSION_TTL_MS;
    expect(pick(pool, { country: 'us', sessionId: 'a' })).to.equal('premium-2');
  });

  it('rests a failed proxy, moves its sessions, and takes it back after the rest', () => {
    const clock = { now: 0 };
    const pool = pools({ PREMIUM_PROXIES: 'us=http://u:p@127.0.0.1:9001,us=http://u:p@127.0.0.1:9002', PROXY_REST_MS: '30000' }, clock);
    const sessionRequest = request({ country: 'us', sessionId: 7 });
    const choice = pool.choose(sessionRequest);
    expect(choice.ok && choice.proxy?.id).to.equal('premium-1');
    if (choice.ok && choice.proxy) pool.fail(choice.proxy, sessionRequest);
    for (let index = 0; index < 4; index++) expect(pick(pool, { country: 'us' })).to.equal('premium-2');
    expect(pick(pool, { country: 'us', sessionId: 7 })).to.equal('premium-2');
    clock.now += 30_000;
    expect(new Set([pick(pool, { country: 'us' }), pick(pool, { country: 'us' })]).size).to.equal(2);
    expect(pick(pool, { country: 'us', sessionId: 7 })).to.equal('premium-2');
  });

  it('still tries the proxy whose rest ends first when all rest, but never one this fetch already tried', () => {
    const clock = { now: 0 };
    const pool = pools({ PREMIUM_PROXIES: 'http://u:p@127.0.0.1:9001,http://u:p@127.0.0.1:9002' }, clock);
    const first = pool.choose(request());
    const second = pool.choose(request());
    if (!first.ok || !first.proxy || !second.ok || !second.proxy) throw new Error('expected two proxies');
    pool.fail(second.proxy, request());
    clock.now += 1;
    pool.fail(first.proxy, request());
    expect(pick(pool)).to.equal(second.proxy.id);
    expect(pick(pool, { exclude: new Set([second.proxy.id]) })).to.equal(first.proxy.id);
    expect(pick(pool, { exclude: new Set(['premium-1', 'premium-2']) })).to.equal('refused: every premium proxy tried failed');
  });

  it('keeps the pin map bounded', () => {
    const clock = { now: 0 };
    const pins = createSessionPins({ now: () => clock.now, maxEntries: 3 });
    for (let index = 0; index < 10; index++) pins.set(`s${index}`, 'p');
    expect(pins.size).to.equal(3);
    expect(pins.get('s9')).to.equal('p');
    expect(pins.get('s0')).to.equal(undefined);
  });

  it('rejects malformed proxy entries at configuration time', () => {
    for (const value of ['ftp://127.0.0.1:21', 'usa=http://127.0.0.1:1', 'http://']) {
      expect(() => loadConfig({ PREMIUM_PROXIES: value }), value).to.throw(/PREMIUM_PROXIES/);
    }
    expect(loadConfig({ PREMIUM_PROXIES: 'US=socks5://a:b@127.0.0.1:1080' }).premiumProxies).to.deep.equal([
      { url: 'socks5://a:b@127.0.0.1:1080', country: 'us' },
    ]);
  });
});
