import { expect } from 'chai';
import { parseRobots, productToken, RobotsReader, type RobotsAnswer } from '../../../engine';
import { compilePattern, indexFrom, matchesPattern } from '../../../engine/robots/glob';
import { ROBOTS_MAX_MATCH_WORK, ROBOTS_MAX_RULE_LENGTH, ROBOTS_MAX_RULES } from '../../../engine/robots/parse';
import { seeded } from '../../helpers/random';

/** RFC 9309 matching by the book, as a table over (path prefix, pattern prefix): slow, plainly right. */
function referenceMatch(pattern: string, path: string): boolean {
  const anchored = pattern.endsWith('$');
  const body = anchored ? pattern.slice(0, -1) : pattern;
  // can[j]: the first i characters of the path are matched by the first j of the pattern.
  let can = [true, ...Array.from(body, () => false)];
  for (let j = 1; j <= body.length && body[j - 1] === '*'; j++) can[j] = true;
  let matchedPrefix = can[body.length]!;
  for (let i = 1; i <= path.length; i++) {
    const next = [false];
    for (let j = 1; j <= body.length; j++) {
      next[j] = body[j - 1] === '*' ? next[j - 1]! || can[j]! : can[j - 1]! && body[j - 1] === path[i - 1];
    }
    can = next;
    if (can[body.length]) matchedPrefix = true;
  }
  return anchored ? can[body.length]! : matchedPrefix;
}

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

  it('matches a pattern that would make a regular expression backtrack, in one pass, with the right answer', () => {
    const rules = parseRobots('User-agent: *\nDisallow: /*a*a*a*a*a*a*a*a*Z$\nAllow: /*a*a*a*a*a*a*a*a*a*Y\n', 'x');
    for (const length of [44, 60, 5_000, 100_000]) {
      expect(rules.allows(`/${'a'.repeat(length)}`), `${length} a's`).to.equal(true);
      expect(rules.allows(`/${'a'.repeat(length)}b`), `${length} a's and b`).to.equal(true);
      expect(rules.allows(`/${'a'.repeat(length)}Z`), `${length} a's and Z`).to.equal(false);
      expect(rules.allows(`/${'a'.repeat(length)}Z?then=more`), `${length} a's, Z and a query`).to.equal(true);
    }
    // Seven a's are too few for the eight the rule wants, however long the path.
    expect(rules.allows(`/${'ab'.repeat(7)}${'b'.repeat(50_000)}Z`)).to.equal(true);
    expect(rules.allows(`/${'ab'.repeat(8)}${'b'.repeat(50_000)}Z`)).to.equal(false);
    // The longer Allow wins over the Disallow where both match.
    expect(rules.allows(`/${'a'.repeat(60)}YZ`)).to.equal(true);
  });

  it('reads a line of 400,000 characters with a comment and no end in one pass', () => {
    const hostile = [`Disallow: /x #${'#'.repeat(200_000)}\u2028y`, `Disallow:${' '.repeat(200_000)}/y\u2028z`].join('\n');
    const rules = parseRobots(`User-agent: *\n${hostile}\n`, 'x');
    expect(rules.allows('/x/1')).to.equal(false);
    expect(rules.allows('/y%E2%80%A8z')).to.equal(false);
    expect(rules.allows('/z')).to.equal(true);
  });

  it('agrees with matching by the book on many random patterns and paths', () => {
    const random = seeded(9309);
    const pick = (alphabet: string, length: number) => Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
    let matched = 0;
    for (let round = 0; round < 20_000; round++) {
      const pattern = `/${pick('ab*', Math.floor(random() * 8))}${random() < 0.4 ? '$' : ''}`;
      const path = `/${pick('ab$', Math.floor(random() * 12))}`;
      const expected = referenceMatch(pattern, path);
      if (expected) matched++;
      expect(matchesPattern(compilePattern(pattern), path), `${pattern} against ${path}`).to.equal(expected);
    }
    // Both answers came up often enough to mean something.
    expect(matched).to.be.within(2_000, 18_000);
  });

  it('finds long pieces in one pass as indexOf would (Knuth–Morris–Pratt), and matches patterns made of them', () => {
    const random = seeded(4180);
    const pick = (length: number) => Array.from({ length }, () => (random() < 0.8 ? 'a' : 'b')).join('');
    for (let round = 0; round < 5_000; round++) {
      const text = pick(Math.floor(random() * 200));
      const from = Math.floor(random() * 50);
      // Half the needles are cut from the text, so they are found.
      const start = Math.floor(random() * text.length);
      const needle = random() < 0.5 ? text.slice(start, start + 17 + Math.floor(random() * 40)) : pick(17 + Math.floor(random() * 40));
      expect(indexFrom(text, needle, from), `${needle} in ${text} from ${from}`).to.equal(text.indexOf(needle, from));
    }
    const long = 'a'.repeat(500) + 'b' + 'a'.repeat(499);
    const rule = compilePattern(`/*${long}*$`);
    expect(matchesPattern(rule, `/${'a'.repeat(2_047)}`)).to.equal(false);
    expect(matchesPattern(rule, `/${'a'.repeat(600)}${long}`)).to.equal(true);
  });

  it(`keeps at most ${ROBOTS_MAX_RULES} rules for our group and ignores rules over ${ROBOTS_MAX_RULE_LENGTH} characters`, () => {
    const many = Array.from({ length: ROBOTS_MAX_RULES + 10 }, (_, index) => `Disallow: /r${index}/`);
    const rules = parseRobots(['User-agent: *', ...many.slice(0, 5), 'User-agent: x', ...many.slice(5)].join('\n'), 'x');
    expect(rules.allows(`/r${ROBOTS_MAX_RULES + 4}/`), 'the last rule kept').to.equal(false);
    expect(rules.allows(`/r${ROBOTS_MAX_RULES + 5}/`), 'the first rule past the cap').to.equal(true);
    expect(rules.allows('/r0/'), 'the * group does not apply').to.equal(true);

    const long = parseRobots(`User-agent: *\nDisallow: /${'l'.repeat(ROBOTS_MAX_RULE_LENGTH)}\nDisallow: /${'k'.repeat(ROBOTS_MAX_RULE_LENGTH - 1)}\n`, 'x');
    expect(long.allows(`/${'l'.repeat(ROBOTS_MAX_RULE_LENGTH)}`)).to.equal(true);
    expect(long.allows(`/${'k'.repeat(ROBOTS_MAX_RULE_LENGTH - 1)}`)).to.equal(false);
  });

  it('bounds the work of one check: a file built to cost more than ROBOTS_MAX_MATCH_WORK for a URL is taken as disallowing it', () => {
    // Every rule searches the whole path for a piece that is not there.
    const text = `User-agent: *\nDisallow: /public/*.tmp$\n${Array.from({ length: ROBOTS_MAX_RULES - 1 }, (_, n) => `Disallow: /*x${n}y`).join('\n')}\n`;
    const rules = parseRobots(text, 'x');
    const long = `/${'a'.repeat(2_047)}`;
    expect(ROBOTS_MAX_RULES * long.length).to.be.above(ROBOTS_MAX_MATCH_WORK);
    expect(rules.decide(long)).to.equal('too_costly');
    expect(rules.allows(long)).to.equal(false);
    // The same file decides ordinary URLs as the RFC says.
    expect(rules.decide('/a/b?c=1')).to.equal('allowed');
    expect(rules.decide('/public/x.tmp')).to.equal('disallowed');
    expect(rules.decide('/q/x17y')).to.equal('disallowed');
    // Plain prefix rules cost their own length only, however many and however long the path.
    const prefixes = parseRobots(`User-agent: *\n${Array.from({ length: ROBOTS_MAX_RULES }, (_, n) => `Disallow: /p${n}/`).join('\n')}\n`, 'x');
    expect(prefixes.decide(long)).to.equal('allowed');
    expect(prefixes.decide(`/p${ROBOTS_MAX_RULES - 1}/${'a'.repeat(2_000)}`)).to.equal('disallowed');
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

    it('says why a URL is refused when its robots.txt is too costly to evaluate for it', async () => {
      const body = `User-agent: *\n${Array.from({ length: ROBOTS_MAX_RULES }, (_, n) => `Disallow: /*x${n}y`).join('\n')}\n`;
      const { robots } = reader([{ ok: true, status: 200, body }], { now: 0 });
      const verdict = await robots.check(`http://d.test/${'a'.repeat(2_000)}`);
      expect(verdict.allowed).to.equal(false);
      expect(verdict.reason).to.match(/too many wildcard rules to evaluate/);
      expect((await robots.check('http://d.test/short')).allowed).to.equal(true);
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
