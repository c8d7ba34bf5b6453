import { expect } from 'chai';
import { parseRobots, productToken, RobotsReader, type RobotsAnswer } from '../../../engine';

describe('robots.txt (RFC 9309)', () => {
  it('picks the group naming our product token, merged when named twice, else the * group', () => {
    const text = [
      'User-agent: *',
      'Disallow: /',
      '',
      'User-agent: fetchplane',
      'Disallow: /private',
      '',
      'User-agent: other',
      'Disallow: /other-only',
      '',
      'User-agent: FetchPlane',
      'Disallow: /also',
    ].join('\n');
    const ours = parseRobots(text, 'Fetchplane/1.0');
    expect(ours.allows('/public')).to.equal(true);
    expect(ours.allows('/private/x')).to.equal(false);
    expect(ours.allows('/also')).to.equal(false);
    expect(ours.allows('/other-only')).to.equal(true);
    const stranger = parseRobots(text, 'Somebot');
    expect(stranger.allows('/public')).to.equal(false);
    expect(productToken('Fetchplane/2.1 (+https://example.test)')).to.equal('fetchplane');
  });

  it('lets consecutive user-agent lines share one group', () => {
    const rules = parseRobots('User-agent: a\nUser-agent: fetchplane\nDisallow: /x\n', 'fetchplane');
    expect(rules.allows('/x')).to.equal(false);
  });

  it('decides by the longest matching rule, allow winning a tie', () => {
    const rules = parseRobots('User-agent: *\nDisallow: /shop\nAllow: /shop/public\nAllow: /tie\nDisallow: /tie\n', 'x');
    expect(rules.allows('/shop/cart')).to.equal(false);
    expect(rules.allows('/shop/public/item')).to.equal(true);
    expect(rules.allows('/tie')).to.equal(true);
  });

  it('reads * as any characters and a final $ as the end of the path', () => {
    const rules = parseRobots('User-agent: *\nDisallow: /*.pdf$\nDisallow: /search*q=\nAllow: /search*q=ok$\n', 'x');
    expect(rules.allows('/docs/a.pdf')).to.equal(false);
    expect(rules.allows('/docs/a.pdf?download=1')).to.equal(true);
    expect(rules.allows('/docs/a.pdfx')).to.equal(true);
    expect(rules.allows('/search?x=1&q=shoes')).to.equal(false);
    expect(rules.allows('/search?q=ok')).to.equal(true);
    expect(rules.allows('http://site.test/search?q=shoes')).to.equal(false);
  });

  it('compares percent-encodings alike, takes empty Disallow as nothing, always allows /robots.txt', () => {
    const rules = parseRobots('User-agent: *\nDisallow: /caf%C3%A9\nDisallow: /%7euser\nDisallow:\nDisallow: /robots.txt\n', 'x');
    expect(rules.allows('/café/menu')).to.equal(false);
    expect(rules.allows('/~user/home')).to.equal(false);
    expect(rules.allows('/anything')).to.equal(true);
    expect(rules.allows('/robots.txt')).to.equal(true);
  });

  it('reads Crawl-delay of the chosen group and Sitemap lines of the whole file, ignoring comments', () => {
    const rules = parseRobots('Sitemap: http://s.test/a.xml\nUser-agent: *   # everyone\nCrawl-delay: 2\nDisallow: /tmp # not this\n\nUser-agent: other\nCrawl-delay: 30\nSitemap: http://s.test/b.xml\n', 'x');
    expect(rules.crawlDelayMs).to.equal(2000);
    expect(rules.sitemaps).to.deep.equal(['http://s.test/a.xml', 'http://s.test/b.xml']);
    expect(rules.allows('/tmp/1')).to.equal(false);
    expect(rules.allows('/tmpx')).to.equal(false);
  });

  describe('reader', () => {
    function reader(answers: RobotsAnswer[], clock: { now: number }) {
      const asked: string[] = [];
      const robots = new RobotsReader({
        userAgent: 'fetchplane',
        cacheMs: 48 * 60 * 60 * 1000,
        errorMs: 60_000,
        now: () => clock.now,
        async fetchText(url) {
          asked.push(url);
          return answers.shift() ?? { ok: false, detail: 'no more answers' };
        },
      });
      return { robots, asked };
    }

    it('treats a 4xx as allow-all and a 5xx or no answer as disallow-all for a while, then asks again', async () => {
      const clock = { now: 0 };
      const missing = reader([{ ok: true, status: 404, body: 'nope' }], clock);
      expect((await missing.robots.check('http://a.test/x')).allowed).to.equal(true);

      const failing = reader([{ ok: true, status: 503, body: '' }, { ok: false, detail: 'refused' }, { ok: true, status: 200, body: 'User-agent: *\nDisallow: /no\n' }], clock);
      const first = await failing.robots.check('http://b.test/x');
      expect(first.allowed).to.equal(false);
      expect(first.reason).to.match(/could not be read/);
      clock.now += 30_000;
      expect((await failing.robots.check('http://b.test/y')).allowed).to.equal(false);
      expect(failing.asked).to.have.length(1);
      clock.now += 31_000;
      expect((await failing.robots.check('http://b.test/y')).allowed).to.equal(false);
      clock.now += 61_000;
      expect((await failing.robots.check('http://b.test/y')).allowed).to.equal(true);
      expect((await failing.robots.check('http://b.test/no')).allowed).to.equal(false);
      expect(failing.asked).to.deep.equal(['http://b.test/robots.txt', 'http://b.test/robots.txt', 'http://b.test/robots.txt']);
    });

    it('keeps a robots.txt per origin at most 24 hours, however long it is asked to', async () => {
      const clock = { now: 0 };
      const { robots, asked } = reader([{ ok: true, status: 200, body: 'User-agent: *\nCrawl-delay: 2\n' }, { ok: true, status: 200, body: 'User-agent: *\nDisallow: /\n' }], clock);
      const verdict = await robots.check('http://c.test/page');
      expect(verdict).to.deep.include({ allowed: true, crawlDelayMs: 2000 });
      clock.now += 23 * 60 * 60 * 1000;
      expect((await robots.check('http://c.test/page')).allowed).to.equal(true);
      clock.now += 2 * 60 * 60 * 1000;
      expect((await robots.check('http://c.test/page')).allowed).to.equal(false);
      expect(asked).to.have.length(2);
      // Another origin (another port) is another robots.txt.
      await robots.check('http://c.test:8080/page');
      expect(asked[2]).to.equal('http://c.test:8080/robots.txt');
    });
  });
});
