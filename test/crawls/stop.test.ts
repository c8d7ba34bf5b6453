import { expect } from 'chai';
import { startCrawlSite, type CrawlSite } from '../fixtures/crawl-site/server';
import { CrawlClient, crawlAccount, creditsUsed, sleep, urlsOf } from './helpers';

describe('crawls: stopping', function () {
  let site: CrawlSite;

  before(async () => {
    site = await startCrawlSite({ pages: 200, fanout: 2, pageDelayMs: 2500, name: 'stop' });
  });
  after(() => site.close());

  it('keeps a stopped crawl’s in-flight pages: they finish, are billed and counted, and no new page starts', async () => {
    const account = await crawlAccount();
    const client = new CrawlClient(account);
    const crawlId = await client.started({ url: site.url, max_items: 1000, max_pages: 1000 });
    // Wait for the start page to be done and its links to be in flight.
    const deadline = Date.now() + 60_000;
    while (site.requests.filter((request) => request.path !== '/' && request.endedAt === undefined).length < 2) {
      if (Date.now() > deadline) throw new Error('pages never went in flight');
      await sleep(50);
    }
    const inFlight = site.requests.filter((request) => request.path !== '/' && request.endedAt === undefined).map((request) => request.path);
    const stop = await client.stop(crawlId);
    const stoppedAt = Date.now();
    expect(stop.status).to.equal(200);
    expect(stop.body).to.have.keys('crawl_id', 'status', 'stop_reason', 'finished_at');
    expect(stop.body).to.include({ crawl_id: crawlId, status: 'stopped', stop_reason: 'user' });

    const right = await client.read(crawlId);
    expect(right.body).to.include({ status: 'stopped', stop_reason: 'user', finished_at: stop.body.finished_at });
    expect(right.body.next_cursor, 'in-flight pages may still land').to.be.a('string');

    const { crawl, results } = await client.finish(crawlId);
    expect(crawl).to.include({ status: 'stopped', stop_reason: 'user', finished_at: stop.body.finished_at });
    expect(crawl).to.not.have.property('error');
    // The pages in flight finished and their links were kept.
    const urls = new Set(urlsOf(results));
    for (const path of inFlight) {
      const index = Number(path.split('/').pop());
      const record = site.requests.find((request) => request.path === path);
      expect(record?.endedAt, path).to.be.a('number');
      for (const link of site.graph.pageLinks(index)) {
        if (link.canonical && link.canonical !== site.url) expect(urls.has(link.canonical), `${link.canonical} from ${path}`).to.equal(true);
      }
    }
    // Nothing started after the stop (a slice sees the stop before its next page; allow for clock and polling).
    const late = site.requests.filter((request) => request.startedAt > stoppedAt + 1_000);
    expect(late.map((request) => request.path)).to.deep.equal([]);
    // robots.txt is read (once per origin, whichever crawl comes first) but is no page of the crawl.
    const pages = new Set(site.requests.map((request) => request.path).filter((path) => path !== '/robots.txt')).size;
    expect(crawl.coverage.pages_fetched).to.equal(pages);
    expect(await creditsUsed(account.accountId)).to.equal(pages);

    // Stopping again changes nothing.
    const again = await client.stop(crawlId);
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal(stop.body);
  });

  it('answers the final state when the crawl already ended', async () => {
    const quick = await startCrawlSite({ pages: 10, fanout: 1, name: 'quick' });
    try {
      const client = new CrawlClient(await crawlAccount());
      const crawlId = await client.started({ url: quick.url });
      const { crawl } = await client.finish(crawlId);
      const stop = await client.stop(crawlId);
      expect(stop.status).to.equal(200);
      expect(stop.body).to.deep.equal({ crawl_id: crawlId, status: 'completed', finished_at: crawl.finished_at });
      const after = await client.read(crawlId);
      expect(after.body).to.include({ status: 'completed', finished_at: crawl.finished_at });
      expect(after.body).to.not.have.property('stop_reason');
    } finally {
      await quick.close();
    }
  });
});
