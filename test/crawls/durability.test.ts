import { expect } from 'chai';
import { startCrawlSite, type CrawlSite } from '../fixtures/crawl-site/server';
import { testStack } from '../helpers/stack';
import { collections, CrawlClient, crawlAccount, creditsUsed, sleep, urlsOf, type Json } from './helpers';

interface Outcome {
  urls: string[];
  crawl: Json;
  credits: number;
}

describe('crawls: durability', function () {
  this.timeout(600_000);
  let site: CrawlSite;
  let reference: Outcome;

  const crawl = async (during?: (client: CrawlClient, crawlId: string) => Promise<void>): Promise<Outcome> => {
    const account = await crawlAccount();
    const client = new CrawlClient(account);
    const crawlId = await client.started({ url: site.url, max_items: 100_000, max_pages: 100_000 });
    if (during) await during(client, crawlId);
    const { crawl: final, results } = await client.finish(crawlId, { timeoutMs: 480_000 });
    return { urls: urlsOf(results), crawl: final, credits: await creditsUsed(account.accountId) };
  };

  const midway = async (client: CrawlClient, crawlId: string): Promise<Json> =>
    client.until(crawlId, (body) => body.status === 'running' && (body.coverage?.pages_fetched ?? 0) >= 150);

  before(async () => {
    site = await startCrawlSite({ pages: 700, fanout: 3, twins: true, posts: 20, pageDelayMs: 40, name: 'durable' });
    reference = await crawl();
    expect(reference.crawl.status).to.equal('completed');
    expect(reference.urls.length).to.equal(site.graph.expected().size);
  });
  after(() => site.close());

  const expectSameAsReference = (outcome: Outcome): void => {
    expect(new Set(outcome.urls).size, 'no duplicate result').to.equal(outcome.urls.length);
    expect([...outcome.urls].sort()).to.deep.equal([...reference.urls].sort());
    expect(outcome.crawl.status).to.equal('completed');
    expect(outcome.crawl.coverage).to.deep.equal(reference.crawl.coverage);
    expect(outcome.crawl.duplicates_removed).to.equal(reference.crawl.duplicates_removed);
    expect(outcome.credits, 'each page billed once').to.equal(reference.credits);
    expect(outcome.credits).to.equal(reference.crawl.coverage.pages_fetched);
  };

  it('completes with exactly the uninterrupted result set when the worker is killed mid-crawl', async () => {
    let killedAt: Json | undefined;
    const outcome = await crawl(async (client, crawlId) => {
      killedAt = await midway(client, crawlId);
      await testStack().component('worker').kill();
      await sleep(1_000);
      await testStack().startOne('worker');
    });
    expect(killedAt?.coverage.pages_fetched).to.be.lessThan(reference.crawl.coverage.pages_fetched);
    expectSameAsReference(outcome);
    // Slices in flight on the killed worker were run again (their found URLs are stored per attempt).
    const retried = await (await collections()).found.countDocuments({ crawl_id: outcome.crawl.crawl_id, _id: { $regex: /\|[2-9]\|\d+$/ } });
    expect(retried, 'found parts written by a second attempt').to.be.greaterThan(0);
  });

  it('completes when the Temporal server restarts mid-crawl', async () => {
    const outcome = await crawl(async (client, crawlId) => {
      await midway(client, crawlId);
      await testStack().component('temporal').stop();
      // Reads come from MongoDB: the crawl stays readable while Temporal is down.
      const whileDown = await client.read(crawlId);
      expect(whileDown.status).to.equal(200);
      await sleep(2_000);
      await testStack().startOne('temporal');
    });
    expectSameAsReference(outcome);
  });

  it('fetches again, and bills once, the slices cut short by a Temporal outage longer than their heartbeat time-out', async () => {
    const outcome = await crawl(async (client, crawlId) => {
      await midway(client, crawlId);
      // Pages slower than the outage: slices are still fetching when the server is back and gives
      // their attempts up; the attempts' pages in flight are aborted, and must not count.
      site.setPageDelay(8_000);
      const temporal = testStack().component('temporal');
      await temporal.kill();
      await sleep(25_000);
      await temporal.start();
      await sleep(12_000);
      site.setPageDelay(40);
    });
    expectSameAsReference(outcome);
  });
});
