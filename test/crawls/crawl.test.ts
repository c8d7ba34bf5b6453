import { expect } from 'chai';
import { startFixtureServer, type FixtureServer } from '../helpers/fixtures';
import { startCrawlSite, type CrawlSite } from '../fixtures/crawl-site/server';
import { CrawlClient, crawlAccount, creditsUsed, urlsOf } from './helpers';

describe('crawls: what a crawl returns', function () {
  let site: CrawlSite;
  let client: CrawlClient;

  before(async () => {
    site = await startCrawlSite({ pages: 120, fanout: 3, twins: true, specials: true, posts: 8 });
    client = new CrawlClient(await crawlAccount());
  });
  after(() => site.close());

  it('returns every URL of the site once, normalized, without the start URL or other domains; bills each page once', async () => {
    const account = await crawlAccount();
    const own = new CrawlClient(account);
    const crawlId = await own.started({ url: site.url, max_items: 10_000, max_pages: 10_000 });
    const { crawl, results } = await own.finish(crawlId, { limit: 37 });
    const urls = urlsOf(results);
    const expected = site.graph.expected();
    expect(new Set(urls).size, 'no duplicates').to.equal(urls.length);
    expect([...urls].sort()).to.deep.equal([...expected.keys()].sort());
    expect(urls).to.not.include(site.url);
    expect(urls.some((url) => url.includes('elsewhere.test') || url.includes('example.org'))).to.equal(false);
    expect(urls.some((url) => /utm_|gclid|fbclid|#/.test(url) || url.startsWith('https:'))).to.equal(false);
    expect(urls.filter((url) => url.includes('blog.fixture.test')).length, 'subdomain pages').to.be.greaterThan(0);
    expect(crawl).to.include({ status: 'completed', crawl_id: crawlId });
    expect(crawl).to.not.have.property('stop_reason');
    expect(crawl).to.not.have.property('error');
    expect(crawl.finished_at).to.be.a('string');
    // Every result was opened (no depth), plus the start page.
    expect(crawl.coverage).to.deep.equal({ pages_fetched: expected.size + 1, pages_failed: 3, items_found: expected.size });
    expect(crawl.duplicates_removed).to.be.greaterThan(expected.size);
    expect(site.requests.some((request) => request.host.startsWith('elsewhere'))).to.equal(false);
    // 404 and 410 are billed; the 500 is not; the 503 retried after its Retry-After is billed once.
    expect(await creditsUsed(account.accountId)).to.equal(crawl.coverage.pages_fetched - 1);
    expect(site.hits('/busy')).to.equal(2);
  });

  describe('duplicates on a hand-written site', () => {
    let server: FixtureServer;
    const pages = (port: number): Record<string, { status?: number; links: string[] }> => ({
      '/': {
        links: ['/a', '/a/', '/b#x', '/b?utm_source=1', `https://www.dup.fixture.test:${port}/a`, '/', 'http://elsewhere.test/', '/c', '#top'],
      },
      '/a': { links: ['/b', '/d', `http://dup.fixture.test:${port}/`] },
      '/b': { links: ['/a', '/d'] },
      '/c': { status: 404, links: ['/e'] },
      '/d': { links: [] },
    });

    before(async () => {
      server = await startFixtureServer((req, res) => {
        const page = pages(server.port)[(req.url ?? '/').split(/[?#]/)[0]!.replace(/(.)\/$/, '$1')];
        res.writeHead(page?.status ?? (page ? 200 : 404), { 'content-type': 'text/html' });
        res.end(`<html><body>${(page?.links ?? []).map((href) => `<a href="${href}">x</a>`).join('')}</body></html>`);
      });
    });
    after(() => server.close());

    it('counts every link met again, and bills 404s but fails them', async () => {
      const account = await crawlAccount();
      const own = new CrawlClient(account);
      const crawlId = await own.started({ url: `http://www.dup.fixture.test:${server.port}/` });
      const { crawl, results } = await own.finish(crawlId);
      const base = `http://www.dup.fixture.test:${server.port}`;
      expect(urlsOf(results).sort()).to.deep.equal([`${base}/a`, `${base}/b`, `${base}/c`, `${base}/d`]);
      // Start page: /a/, /b?utm…, https /a, / → 4; /a: /b, the start twin → 2; /b: /a and one of the two /d → 2.
      expect(crawl.duplicates_removed).to.equal(8);
      expect(crawl.coverage).to.deep.equal({ pages_fetched: 5, pages_failed: 1, items_found: 4 });
      expect(await creditsUsed(account.accountId)).to.equal(5);
    });
  });

  it('follows links `depth` steps: 1 returns the start page links, 2 also theirs', async () => {
    for (const depth of [1, 2, 3]) {
      const crawlId = await client.started({ url: site.url, depth, max_items: 10_000, max_pages: 10_000 });
      const { crawl, results } = await client.finish(crawlId);
      const expected = site.graph.expected({ depth });
      expect([...urlsOf(results)].sort(), `depth ${depth}`).to.deep.equal([...expected.keys()].sort());
      expect(crawl.depth).to.equal(depth);
      const opened = [...site.graph.expected({ depth: depth - 1 }).keys()].length + 1;
      expect(crawl.coverage.pages_fetched, `depth ${depth}`).to.equal(opened);
    }
  });

  it('keeps and opens only URLs within the include patterns and outside the exclude patterns', async () => {
    const include = ['/p/1', '/post/'];
    const exclude = ['/p/11'];
    const crawlId = await client.started({ url: site.url, include_patterns: include, exclude_patterns: exclude, max_items: 10_000, max_pages: 10_000 });
    const { crawl, results } = await client.finish(crawlId);
    const urls = urlsOf(results);
    expect([...urls].sort()).to.deep.equal([...site.graph.expected({ include, exclude }).keys()].sort());
    expect(urls.every((url) => (url.includes('/p/1') || url.includes('/post/')) && !url.includes('/p/11'))).to.equal(true);
    expect(crawl.include_patterns).to.deep.equal(include);
    expect(crawl.exclude_patterns).to.deep.equal(exclude);
  });

  it('stops at max_items with stop_reason max_items', async () => {
    const crawlId = await client.started({ url: site.url, max_items: 10, max_pages: 1000 });
    const { crawl, results } = await client.finish(crawlId);
    expect(results).to.have.length(10);
    expect(crawl).to.include({ status: 'completed', stop_reason: 'max_items' });
    expect(crawl.coverage.items_found).to.equal(10);
    const all = new Set(site.graph.expected().keys());
    expect(urlsOf(results).every((url) => all.has(url))).to.equal(true);
  });

  it('stops at max_pages with stop_reason max_pages, fetching no more pages', async () => {
    const crawlId = await client.started({ url: site.url, max_items: 1000, max_pages: 4 });
    const { crawl, results } = await client.finish(crawlId);
    expect(crawl).to.include({ status: 'completed', stop_reason: 'max_pages' });
    expect(crawl.coverage.pages_fetched).to.equal(4);
    expect(results.length).to.equal(crawl.coverage.items_found);
    expect(results.length).to.be.greaterThan(3);
  });

  it('reports max_pages when both limits are reached together', async () => {
    const crawlId = await client.started({ url: site.url, max_items: 3, max_pages: 1 });
    const { crawl, results } = await client.finish(crawlId);
    expect(results).to.have.length(3);
    expect(crawl).to.include({ status: 'completed', stop_reason: 'max_pages' });
    expect(crawl.coverage).to.deep.equal({ pages_fetched: 1, pages_failed: 0, items_found: 3 });
  });

  it('uses the configured defaults of max_items and max_pages (100) and no depth', async () => {
    const crawlId = await client.started({ url: site.url });
    const { crawl, results } = await client.finish(crawlId);
    expect(crawl).to.include({ max_items: 100, max_pages: 100 });
    expect(crawl).to.not.have.property('depth');
    expect(results).to.have.length(100);
    expect(crawl.stop_reason).to.be.oneOf(['max_items', 'max_pages']);
  });

  describe('failures', () => {
    let empty: FixtureServer;
    before(async () => {
      empty = await startFixtureServer((req, res) => {
        if (req.url === '/') {
          res.writeHead(200, { 'content-type': 'text/html' });
          res.end('<html><body><p>No links here.</p><a href="http://elsewhere.test/">out</a></body></html>');
        } else {
          res.writeHead(404, { 'content-type': 'text/html' });
          res.end('missing');
        }
      });
    });
    after(() => empty.close());

    it('fails with no_items_found when nothing is found', async () => {
      const crawlId = await client.started({ url: `http://www.empty.fixture.test:${empty.port}/` });
      const { crawl, results } = await client.finish(crawlId);
      expect(results).to.deep.equal([]);
      expect(crawl.status).to.equal('failed');
      expect(crawl.error.code).to.equal('no_items_found');
      expect(crawl.error.detail).to.be.a('string').with.length.greaterThan(0);
      expect(crawl).to.not.have.property('stop_reason');
      expect(crawl.finished_at).to.be.a('string');
    });

    it('fails with seed_unreachable when the start URL answers 404 or cannot be reached', async () => {
      for (const url of [`http://www.empty.fixture.test:${empty.port}/nowhere`, 'http://www.closed.fixture.test:1/']) {
        const crawlId = await client.started({ url });
        const { crawl } = await client.finish(crawlId);
        expect(crawl.status, url).to.equal('failed');
        expect(crawl.error.code, url).to.equal('seed_unreachable');
        expect(crawl.error.detail).to.match(/start URL/);
      }
    });

    it('fails with insufficient_credits when credits run out, keeping what it found', async () => {
      const poor = await crawlAccount({ credits: 6 });
      const own = new CrawlClient(poor);
      const crawlId = await own.started({ url: site.url, max_items: 1000, max_pages: 1000 });
      const { crawl, results } = await own.finish(crawlId);
      expect(crawl.status).to.equal('failed');
      expect(crawl.error.code).to.equal('insufficient_credits');
      expect(results.length).to.equal(crawl.coverage.items_found).and.to.be.greaterThan(0);
      const used = await creditsUsed(poor.accountId);
      expect(used).to.be.within(1, 6);
      // Pages that failed with a server error are free: they may add to the billed ones.
      expect(crawl.coverage.pages_fetched).to.be.within(used, used + crawl.coverage.pages_failed);
    });
  });
});
