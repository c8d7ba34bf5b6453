import { expect } from 'chai';
import { ActiveJobs } from '../../core/jobs/active-jobs';
import { IdempotencyKeys } from '../../core/jobs/idempotency';
import { startCrawlSite, type CrawlSite } from '../fixtures/crawl-site/server';
import { accountsHandle, CrawlClient, crawlAccount } from './helpers';

describe('crawls: starting one', function () {
  let site: CrawlSite;
  let client: CrawlClient;

  before(async () => {
    site = await startCrawlSite({ pages: 40, fanout: 2, pageDelayMs: 50 });
    client = new CrawlClient(await crawlAccount());
  });
  after(() => site.close());

  it('answers 202 with Location and the zeroed crawl object', async () => {
    const answer = await client.start({ url: site.url, depth: 2, max_items: 50, max_pages: 20, include_patterns: ['/p/'], exclude_patterns: ['/p/9'], output_format: 'html' });
    expect(answer.status).to.equal(202);
    const crawlId = answer.body.crawl_id as string;
    expect(crawlId).to.match(/^c_[0-9a-z]+$/);
    expect(answer.headers.get('location')).to.equal(`/v1/crawls/${crawlId}`);
    expect(answer.headers.get('content-type')).to.match(/^application\/json/);
    const { created_at: createdAt, next_cursor: cursor, ...rest } = answer.body;
    expect(rest).to.deep.equal({
      crawl_id: crawlId,
      status: 'running',
      url: site.url,
      depth: 2,
      max_items: 50,
      max_pages: 20,
      include_patterns: ['/p/'],
      exclude_patterns: ['/p/9'],
      output_format: 'html',
      respect_robots: true,
      include_documents: true,
      discovery: ['links'],
      extract_calls: 0,
      coverage: { pages_fetched: 0, pages_failed: 0, items_found: 0 },
      duplicates_removed: 0,
      results: [],
    });
    expect(new Date(createdAt as string).toISOString()).to.equal(createdAt);
    expect(cursor).to.be.a('string').with.length.greaterThan(0);
    await client.finish(crawlId);
  });

  it('refuses unknown fields, bad values and bad JSON with the Crawl codes', async () => {
    const cases: Array<[unknown, number, string, RegExp?]> = [
      [{ url: site.url, colour: 'red' }, 400, 'unknown_parameter', /colour/],
      [{}, 400, 'invalid_parameter', /url/],
      [{ url: 42 }, 400, 'invalid_parameter', /url/],
      [{ url: site.url, depth: 0 }, 422, 'invalid_parameter', /depth/],
      [{ url: site.url, max_items: 100_001 }, 422, 'invalid_parameter', /max_items/],
      [{ url: site.url, max_pages: 1.5 }, 400, 'invalid_parameter', /max_pages/],
      [{ url: site.url, output_format: 'pdf' }, 422, 'invalid_parameter', /output_format/],
      [{ url: site.url, discovery: ['links', 'pagination'] }, 422, 'invalid_parameter', /pagination/],
      [{ url: site.url, include_patterns: 'x' }, 400, 'invalid_parameter', /include_patterns/],
    ];
    for (const [body, status, code, detail] of cases) {
      const answer = await client.start(body as Record<string, unknown>);
      expect(answer.status, JSON.stringify(body)).to.equal(status);
      expect(answer.headers.get('content-type')).to.equal('application/problem+json');
      expect(answer.body.code, JSON.stringify(body)).to.equal(code);
      if (detail) expect(answer.body.detail).to.match(detail);
    }
    const malformed = await client.request('POST', '/v1/crawls', { raw: '{"url": ' });
    expect([malformed.status, malformed.body.code]).to.deep.equal([400, 'invalid_request']);
    const unknownQuery = await client.request('POST', '/v1/crawls?verbose=1', { body: { url: site.url } });
    expect([unknownQuery.status, unknownQuery.body.code]).to.deep.equal([400, 'unknown_parameter']);
  });

  it('refuses start URLs that are not public http(s) URLs with invalid_start_url (422)', async () => {
    for (const url of [
      `http://127.0.0.1:${site.port}/`,
      'http://[::1]/',
      'http://10.0.0.8/',
      `http://localhost:${site.port}/`,
      'http://printer.local/',
      'http://service.internal/',
      'ftp://www.shop.fixture.test/',
      'not-a-url',
      `${site.url}?q=${'a'.repeat(2049)}`,
    ]) {
      const answer = await client.start({ url });
      expect([answer.status, answer.body.code], url.slice(0, 60)).to.deep.equal([422, 'invalid_start_url']);
    }
  });

  it('authenticates with X-API-Key or apikey, with the Fetch codes', async () => {
    const missing = await client.request('POST', '/v1/crawls', { body: { url: site.url }, key: null });
    expect([missing.status, missing.body.code]).to.deep.equal([401, 'AUTH001']);
    const malformed = await client.request('POST', '/v1/crawls', { body: { url: site.url }, key: 'nope' });
    expect([malformed.status, malformed.body.code]).to.deep.equal([401, 'AUTH002']);
    const unknown = await client.request('POST', '/v1/crawls', { body: { url: site.url }, key: 'a'.repeat(40) });
    expect([unknown.status, unknown.body.code]).to.deep.equal([401, 'AUTH003']);
    const inQuery = await client.request('GET', `/v1/crawls?apikey=${client.account.key}`, { key: null });
    expect(inQuery.status).to.equal(200);
  });

  it('answers 402 AUTH004 to an account without credits, starting nothing', async () => {
    const broke = new CrawlClient(await crawlAccount({ credits: 0 }));
    const answer = await broke.start({ url: site.url });
    expect([answer.status, answer.body.code]).to.deep.equal([402, 'AUTH004']);
    const list = await broke.request('GET', '/v1/crawls');
    expect(list.body.crawls).to.deep.equal([]);
  });

  describe('Idempotency-Key', () => {
    it('returns the same crawl for the same key and body, and refuses another body', async () => {
      const headers = { 'Idempotency-Key': `key-${Date.now()}` };
      const first = await client.start({ url: site.url, max_pages: 5 }, headers);
      expect(first.status).to.equal(202);
      const again = await client.start({ max_pages: 5, url: site.url }, headers);
      expect(again.status).to.equal(202);
      expect(again.body.crawl_id).to.equal(first.body.crawl_id);
      expect(again.headers.get('location')).to.equal(`/v1/crawls/${first.body.crawl_id as string}`);
      const other = await client.start({ url: site.url, max_pages: 6 }, headers);
      expect([other.status, other.body.code]).to.deep.equal([422, 'idempotency_key_reused']);
      const list = await client.request('GET', '/v1/crawls?limit=100');
      expect((list.body.crawls as Array<{ crawl_id: string }>).filter((crawl) => crawl.crawl_id === first.body.crawl_id)).to.have.length(1);
      await client.finish(first.body.crawl_id);
    });

    it('answers 409 while a request with the key is in flight, and 400 to a key over 255 characters', async () => {
      const key = `in-flight-${Date.now()}`;
      const body = { url: site.url };
      const keys = new IdempotencyKeys((await accountsHandle()).db.db, 'crawl');
      const claim = await keys.claim(client.account.accountId, key, body);
      expect(claim.kind).to.equal('claimed');
      const answer = await client.start(body, { 'Idempotency-Key': key });
      expect([answer.status, answer.body.code]).to.deep.equal([409, 'idempotency_request_in_flight']);
      if (claim.kind === 'claimed') await claim.drop();
      const long = await client.start(body, { 'Idempotency-Key': 'k'.repeat(256) });
      expect([long.status, long.body.code]).to.deep.equal([400, 'invalid_request']);
    });

    it('lets a refused request be retried with its key', async () => {
      const broke = await crawlAccount({ credits: 0 });
      const own = new CrawlClient(broke);
      const headers = { 'Idempotency-Key': 'retry-me' };
      expect((await own.start({ url: site.url }, headers)).status).to.equal(402);
      expect((await own.start({ url: site.url }, headers)).status).to.equal(402);
    });
  });

  describe('active jobs', () => {
    it('answers 429 too_many_crawls with Retry-After: 30 to the fourth job, Batch jobs included', async () => {
      const slow = await startCrawlSite({ pages: 400, fanout: 2, pageDelayMs: 1500 });
      try {
        const own = new CrawlClient(await crawlAccount());
        const running = [await own.started({ url: slow.url, max_pages: 400 }), await own.started({ url: slow.url, max_pages: 400 })];
        // A Batch job of the same account takes the third slot.
        const jobs = new ActiveJobs((await accountsHandle()).db.db);
        expect(await jobs.acquire(own.account.accountId, 3, { id: 'j_test_batch', kind: 'batch' })).to.deep.equal({ ok: true });
        const fourth = await own.start({ url: slow.url });
        expect([fourth.status, fourth.body.code]).to.deep.equal([429, 'too_many_crawls']);
        expect(fourth.headers.get('retry-after')).to.equal('30');
        await jobs.release('j_test_batch');
        const third = await own.started({ url: slow.url, max_pages: 400 });
        running.push(third);
        expect((await own.start({ url: slow.url })).status).to.equal(429);
        // A stopped crawl no longer counts.
        expect((await own.stop(running[0] as string)).status).to.equal(200);
        const after = await own.started({ url: slow.url, max_pages: 400 });
        running.push(after);
        for (const crawlId of running) await own.stop(crawlId);
      } finally {
        await slow.close();
      }
    });
  });
});
