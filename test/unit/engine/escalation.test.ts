import { expect } from 'chai';
import {
  createRungMemory,
  detectBlock,
  InMemoryDomainRungStore,
  rungDomainOf,
  RUNGS,
  describeRung,
} from '../../../engine/escalation';

const page = (text: string): string => `<html><head><title>t</title></head><body><p>${text}</p></body></html>`;

describe('block detection', () => {
  const cases: Array<[string, Parameters<typeof detectBlock>[0], false | { reason: RegExp; needs: string[] }]> = [
    ['an ordinary page', { status: 200, headers: [['content-type', 'text/html']], body: page('Plenty of real words on this page. '.repeat(5)) }, false],
    ['a 404 page', { status: 404, body: page('not here') }, false],
    ['a JSON answer', { status: 200, headers: { 'content-type': 'application/json' }, body: '{}' }, false],
    ['a 403', { status: 403, body: page('Forbidden') }, { reason: /403/, needs: ['residential_ip'] }],
    ['a 429', { status: 429, body: '' }, { reason: /429/, needs: ['residential_ip'] }],
    ['a 401', { status: 401, body: '' }, { reason: /401/, needs: [] }],
    ['a bare 503', { status: 503, body: page('down') }, { reason: /503/, needs: [] }],
    ['a challenge title', { status: 503, body: '<title>Just a moment...</title>' }, { reason: /Cloudflare challenge/, needs: ['javascript'] }],
    ['a challenge header on a 200', { status: 200, headers: [['cf-mitigated', 'challenge']], body: page('x') }, { reason: /challenge/, needs: ['javascript'] }],
    ['a DataDome block', { status: 403, body: '<script src="https://ct.captcha-delivery.com/c.js"></script>' }, { reason: /DataDome/, needs: ['javascript', 'residential_ip'] }],
    ['an empty 200', { status: 200, headers: { 'content-type': 'text/html' }, body: '  ' }, { reason: /empty/, needs: ['javascript'] }],
    [
      'a page of scripts only',
      { status: 200, html: '<html><body><div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript><script src="/app.js"></script></body></html>' },
      { reason: /scripts only/, needs: ['javascript'] },
    ],
  ];
  for (const [name, response, expected] of cases) {
    it(`reads ${name} as ${expected ? 'blocked' : 'the page'}`, () => {
      const verdict = detectBlock(response);
      if (!expected) expect(verdict).to.deep.equal({ blocked: false });
      else {
        expect(verdict.blocked).to.equal(true);
        if (verdict.blocked) {
          expect(verdict.reason).to.match(expected.reason);
          expect([...verdict.needs]).to.deep.equal(expected.needs);
        }
      }
    });
  }

  it('ignores weak markers inside a long ordinary page', () => {
    const long = page(`${'Article text. '.repeat(2_000)}<script>/* px-captcha sensor */</script>`);
    expect(detectBlock({ status: 200, body: Buffer.from(long) })).to.deep.equal({ blocked: false });
    expect(detectBlock({ status: 403, body: long }).blocked).to.equal(true);
  });
});

describe('auto-mode configurations', () => {
  it('are data: cost 1, 5, 10, 25 with their capabilities', () => {
    expect(RUNGS.map((rung) => [rung.id, rung.cost, rung.engine, rung.premiumProxy])).to.deep.equal([
      ['plain', 1, 'plain', false],
      ['js_render', 5, 'rendered', false],
      ['premium_proxy', 10, 'plain', true],
      ['js_render_premium_proxy', 25, 'rendered', true],
    ]);
    expect(describeRung(RUNGS[3]!)).to.equal('js_render=true&premium_proxy=true');
  });
});

describe('per-domain rung memory', () => {
  it('keys by registrable domain', () => {
    expect(rungDomainOf('https://www.shop.example.co.uk/a')).to.equal('example.co.uk');
    expect(rungDomainOf('http://app.fixture.test:8080/')).to.equal('fixture.test');
    expect(rungDomainOf('http://127.0.0.1:3000/')).to.equal('127.0.0.1');
    expect(rungDomainOf('http://[::1]:3000/')).to.equal('::1');
  });

  it('forgets a rung once it expires (checked on read) and flags it stale past half its life', async () => {
    let now = 1_000_000;
    const store = new InMemoryDomainRungStore();
    const memory = createRungMemory(store, { ttlMs: 60_000, now: () => now });
    await memory.remember('https://a.example.com/x', 'js_render');
    expect(await memory.recall('https://b.example.com/y')).to.deep.equal({ rung: 'js_render', stale: false });
    now += 40_000;
    expect(await memory.recall('https://example.com/')).to.deep.equal({ rung: 'js_render', stale: true });
    now += 20_000;
    expect(await memory.recall('https://example.com/')).to.equal(undefined);
    expect(store.records.size).to.equal(0);
  });
});
