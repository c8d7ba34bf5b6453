/**
 * Crawls and Fetch against sites with robots.txt variants: what is disallowed is skipped (listed, never
 * fetched, never billed), what is allowed is fetched, a missing robots.txt allows everything, an
 * unreadable one nothing, and `Crawl-delay` spaces the requests at the site.
 */
import { expect } from 'chai';
import { startFixtureServer, type FixtureServer } from '../helpers/fixtures';
import { testStack } from '../helpers/stack';
import { CrawlClient, crawlAccount, creditsUsed, type Json } from '../crawls/helpers';

const ROBOTS: Record<string, { status: number; body: string }> = {
  rules: { status: 200, body: 'User-agent: *\nDisallow: /private\nAllow: /private/open\nDisallow: /*.pdf$\nDisallow: /search*q=\n\nUser-agent: otherbot\nDisallow: /\n' },
  delay: { status: 200, body: 'User-agent: *\nCrawl-delay: 2\n' },
  missing: { status: 404, body: 'not here' },
  down: { status: 503, body: 'down for maintenance' },
};

const LINKS = ['/a', '/private/x', '/private/open', '/doc.pdf', '/doc.pdf?v=1', '/search?q=shoes', '/search?page=2'];

describe('politeness: robots.txt', function () {
  let site: FixtureServer;
  /** Arrival time of each request, by host and path. */
  const arrivals: Array<{ site: string; path: string; at: number }> = [];

  before(async () => {
    site = await startFixtureServer((req, res) => {
      const name = (req.headers.host ?? '').split('.')[0]!;
      const path = req.url ?? '/';
      arrivals.push({ site: name, path, at: Date.now() });
      if (path === '/robots.txt') {
        const robots = ROBOTS[name] ?? { status: 404, body: '' };
        res.writeHead(robots.status, { 'content-type': 'text/plain' });
        res.end(robots.body);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(path === '/' ? `<html><body>${LINKS.map((href) => `<a href="${href}">link</a>`).join('')}</body></html>` : `<html><body><p>${path}</p></body></html>`);
    });
  });
  after(() => site.close());

  const origin = (name: string) => `http://${name}.fixture.test:${site.port}`;
  const paths = (name: string) => arrivals.filter((arrival) => arrival.site === name).map((arrival) => arrival.path);
  const byUrl = (results: Json[]) => Object.fromEntries(results.map((result) => [result.url.replace(/^http:\/\/[^/]+/, ''), result]));

  it('skips exactly the disallowed URLs: listed as skipped, never fetched, never billed', async () => {
    const account = await crawlAccount();
    const client = new CrawlClient(account);
    const crawlId = await client.started({ url: `${origin('rules')}/`, output_format: 'html' });
    const { crawl, results } = await client.finish(crawlId);
    expect(crawl.status).to.equal('completed');
    expect(crawl.respect_robots).to.equal(true);
    const found = byUrl(results);
    expect(Object.keys(found).sort()).to.deep.equal([...LINKS].sort());
    for (const skipped of ['/private/x', '/doc.pdf', '/search?q=shoes']) expect(found[skipped], skipped).to.include({ content_status: 'skipped', skip_reason: 'robots_txt' });
    for (const fetched of ['/a', '/private/open', '/doc.pdf?v=1', '/search?page=2']) expect(found[fetched], fetched).to.include({ content_status: 'fetched' });
    expect(paths('rules').filter((path) => path !== '/robots.txt').sort()).to.deep.equal(['/', '/a', '/doc.pdf?v=1', '/private/open', '/search?page=2'].sort());
    expect(paths('rules').filter((path) => path === '/robots.txt'), 'robots.txt read once').to.have.length.at.most(1);
    expect(crawl.coverage).to.deep.include({ pages_fetched: 5, pages_failed: 0, items_found: 7 });
    // The start page and the four allowed results, one credit each.
    expect(await creditsUsed(account.accountId)).to.equal(5);
  });

  it('lists skipped URLs of a crawl that keeps no pages, and fetches them all when asked not to respect robots.txt', async () => {
    const client = new CrawlClient(await crawlAccount());
    const respectful = byUrl((await client.finish(await client.started({ url: `${origin('rules')}/` }))).results);
    expect(respectful['/private/x']).to.deep.equal({ url: `${origin('rules')}/private/x`, content_status: 'skipped', skip_reason: 'robots_txt' });
    expect(respectful['/a']).to.deep.equal({ url: `${origin('rules')}/a` });

    const before = paths('rules').filter((path) => path === '/private/x').length;
    const { crawl, results } = await client.finish(await client.started({ url: `${origin('rules')}/`, respect_robots: false, output_format: 'html' }));
    expect(crawl.respect_robots).to.equal(false);
    expect(results.filter((result: Json) => result.content_status !== 'fetched'), JSON.stringify(results)).to.deep.equal([]);
    expect(paths('rules').filter((path) => path === '/private/x').length).to.equal(before + 1);
  });

  it('takes a 404 robots.txt as allowing everything and a 503 one as allowing nothing for now', async () => {
    const account = await crawlAccount();
    const client = new CrawlClient(account);
    const open = await client.finish(await client.started({ url: `${origin('missing')}/`, output_format: 'html' }));
    expect(open.crawl.status).to.equal('completed');
    expect(open.results.every((result: Json) => result.content_status === 'fetched')).to.equal(true);
    expect(open.results).to.have.length(LINKS.length);

    const closed = new CrawlClient(await crawlAccount());
    const down = await closed.finish(await closed.started({ url: `${origin('down')}/` }));
    expect(down.crawl.status).to.equal('failed');
    expect(down.crawl.error.code).to.equal('seed_unreachable');
    expect(down.crawl.error.detail).to.match(/robots\.txt/);
    expect(paths('down')).to.deep.equal(['/robots.txt']);
    expect(await creditsUsed(closed.account.accountId)).to.equal(0);
  });

  it('spaces requests by Crawl-delay, for every job at the host', async () => {
    const client = new CrawlClient(await crawlAccount());
    const { crawl } = await client.finish(await client.started({ url: `${origin('delay')}/` }));
    expect(crawl.coverage.pages_fetched).to.equal(LINKS.length + 1);
    // A Fetch of the same host waits its turn too, though it does not ask robots.txt itself.
    const fetched = await fetch(`${testStack().urls.api}/v1/?apikey=${client.account.key}&url=${encodeURIComponent(`${origin('delay')}/after`)}`);
    expect(fetched.status).to.equal(200);
    const starts = arrivals.filter((arrival) => arrival.site === 'delay' && arrival.path !== '/robots.txt').map((arrival) => arrival.at);
    expect(starts.length).to.equal(LINKS.length + 2);
    for (let index = 1; index < starts.length; index++) expect(starts[index]! - starts[index - 1]!, `gap before request ${index}`).to.be.at.least(1_900);
  });

  it('refuses a Fetch or Batch URL robots.txt disallows only when respect_robots=true is given', async () => {
    const account = await crawlAccount();
    const url = `${origin('rules')}/private/fetch-me`;
    const api = testStack().urls.api;
    const refused = await fetch(`${api}/v1/?apikey=${account.key}&url=${encodeURIComponent(url)}&respect_robots=true`);
    expect(refused.status).to.equal(403);
    expect(((await refused.json()) as Json).code).to.equal('REQS009');
    expect(paths('rules')).to.not.include('/private/fetch-me');
    expect(await creditsUsed(account.accountId)).to.equal(0);
    const allowed = await fetch(`${api}/v1/?apikey=${account.key}&url=${encodeURIComponent(url)}`);
    expect(allowed.status).to.equal(200);
    expect(paths('rules')).to.include('/private/fetch-me');
  });
});
