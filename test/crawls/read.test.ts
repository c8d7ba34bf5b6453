import { expect } from 'chai';
import { startCrawlSite, type CrawlSite } from '../fixtures/crawl-site/server';
import { CrawlClient, crawlAccount, sleep, urlsOf, type Json } from './helpers';

describe('crawls: reading results', function () {
  let site: CrawlSite;
  let client: CrawlClient;

  before(async () => {
    site = await startCrawlSite({ pages: 150, fanout: 3, twins: true, posts: 4 });
    client = new CrawlClient(await crawlAccount());
  });
  after(() => site.close());

  it('pages with a cursor while the crawl runs: never null before the end, each URL once, only new URLs on a re-read', async () => {
    const slow = await startCrawlSite({ pages: 80, fanout: 3, pageDelayMs: 150, name: 'slow' });
    try {
      const crawlId = await client.started({ url: slow.url, max_items: 1000, max_pages: 1000 });
      const seen: string[] = [];
      let cursor: string | undefined;
      let sawRunningWithCursor = false;
      let rereadChecked = false;
      for (let reads = 0; reads < 2000; reads++) {
        const answer = await client.read(crawlId, { ...(cursor ? { cursor } : {}), limit: 7 });
        expect(answer.status).to.equal(200);
        const urls = urlsOf(answer.body.results as Json[]);
        seen.push(...urls);
        if (answer.body.status === 'running') {
          expect(answer.body.next_cursor, 'running').to.be.a('string');
          sawRunningWithCursor = true;
        }
        if (answer.body.next_cursor === null) break;
        if (!rereadChecked && cursor && urls.length > 0) {
          // Reading again from the same cursor returns the same page, never an earlier URL.
          const again = await client.read(crawlId, { cursor, limit: 7 });
          const againUrls = urlsOf(again.body.results as Json[]);
          expect(againUrls.slice(0, urls.length)).to.deep.equal(urls);
          rereadChecked = true;
        }
        cursor = answer.body.next_cursor as string;
        if (urls.length === 0) await sleep(200);
      }
      expect(sawRunningWithCursor).to.equal(true);
      expect(new Set(seen).size).to.equal(seen.length);
      expect([...seen].sort()).to.deep.equal([...slow.graph.expected().keys()].sort());
      // After the end a fresh read from the start returns everything, and the last cursor stays final.
      const whole = await client.finish(crawlId, { limit: 10_000 });
      expect(whole.results).to.have.length(seen.length);
      expect(whole.reads).to.equal(1);
      const tail = await client.read(crawlId, { cursor: cursor as string });
      expect(tail.body.next_cursor).to.equal(null);
    } finally {
      await slow.close();
    }
  });

  it('refuses another crawl’s cursor, a garbage cursor and limits out of range', async () => {
    const first = await client.started({ url: site.url, max_items: 20 });
    const second = await client.started({ url: site.url, max_items: 20 });
    const firstRead = await client.read(first, { limit: 1 });
    const foreign = await client.read(second, { cursor: firstRead.body.next_cursor as string });
    expect([foreign.status, foreign.body.code]).to.deep.equal([400, 'invalid_cursor']);
    const garbage = await client.read(first, { cursor: 'bm90LWEtY3Vyc29y' });
    expect([garbage.status, garbage.body.code]).to.deep.equal([400, 'invalid_cursor']);
    for (const limit of ['0', '10001', 'x']) {
      const answer = await client.read(first, { limit });
      expect([answer.status, answer.body.code], limit).to.deep.equal([400, 'invalid_parameter']);
    }
    const unknown = await client.read(first, { verbose: 1 });
    expect([unknown.status, unknown.body.code]).to.deep.equal([400, 'unknown_parameter']);
    await client.finish(first);
    await client.finish(second);
  });

  it('hides a crawl from other accounts: crawl_not_found on every endpoint', async () => {
    const crawlId = await client.started({ url: site.url, max_items: 5 });
    const stranger = new CrawlClient(await crawlAccount());
    for (const [method, path] of [
      ['GET', `/v1/crawls/${crawlId}`],
      ['GET', `/v1/crawls/${crawlId}/download`],
      ['GET', `/v1/crawls/${crawlId}/contents/1-0`],
      ['POST', `/v1/crawls/${crawlId}/stop`],
      ['GET', '/v1/crawls/c_doesnotexist'],
      ['GET', '/v1/crawls/not-an-id'],
    ] as const) {
      const answer = await stranger.request(method, path);
      expect([answer.status, answer.body.code], path).to.deep.equal([404, 'crawl_not_found']);
    }
    expect((await stranger.request('GET', '/v1/crawls')).body.crawls).to.deep.equal([]);
    await client.finish(crawlId);
  });

  it('lists crawls newest first, limit 1..100, next_cursor absent on the last page', async () => {
    const own = new CrawlClient(await crawlAccount());
    const ids: string[] = [];
    // One at a time: the account runs at most 3 jobs.
    for (let n = 0; n < 5; n++) {
      ids.push(await own.started({ url: site.url, max_items: 3 }));
      await own.finish(ids[n] as string);
    }
    const listed: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const answer = await own.request('GET', `/v1/crawls?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(answer.status).to.equal(200);
      const crawls = answer.body.crawls as Json[];
      for (const crawl of crawls) {
        expect(crawl).to.not.have.property('results');
        expect(crawl).to.not.have.property('next_cursor');
        expect(crawl).to.include.keys('crawl_id', 'status', 'coverage', 'created_at', 'url');
      }
      listed.push(...crawls.map((crawl) => crawl.crawl_id as string));
      if (!('next_cursor' in answer.body)) break;
      cursor = answer.body.next_cursor as string;
    }
    expect(listed).to.deep.equal([...ids].reverse());
    const all = await own.request('GET', '/v1/crawls');
    expect((all.body.crawls as Json[]).map((crawl) => crawl.crawl_id)).to.deep.equal([...ids].reverse());
    expect(all.body).to.not.have.property('next_cursor');
    for (const query of ['limit=0', 'limit=101', 'limit=abc', 'cursor=zzz']) {
      const answer = await own.request('GET', `/v1/crawls?${query}`);
      expect([answer.status, answer.body.code], query).to.deep.equal([400, 'invalid_request']);
    }
  });

  it('downloads every result as NDJSON named after the crawl, with X-Crawl-Status', async () => {
    const crawlId = await client.started({ url: site.url, max_items: 1000, max_pages: 1000 });
    const { results } = await client.finish(crawlId);
    const response = await fetch(`${client.api}/v1/crawls/${crawlId}/download`, { headers: { 'X-API-Key': client.account.key } });
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.match(/^application\/x-ndjson/);
    expect(response.headers.get('content-disposition')).to.equal(`attachment; filename="${crawlId}.jsonl"`);
    expect(response.headers.get('x-crawl-status')).to.equal('completed');
    const lines = (await response.text()).trim().split('\n').map((line) => JSON.parse(line) as Json);
    expect(lines).to.deep.equal(results);
    expect(lines.every((line) => Object.keys(line).join() === 'url')).to.equal(true);
  });

  describe('output_format: html', () => {
    it('keeps each kept page’s HTML: content_status, content_url, contents and download', async () => {
      const crawlId = await client.started({ url: site.url, depth: 1, output_format: 'html', max_items: 1000, max_pages: 1000 });
      await client.finish(crawlId);
      // Read again from the start: results read while pages were pending are fetched now.
      const { crawl, results } = await client.finish(crawlId, { limit: 10_000 });
      expect(crawl.output_format).to.equal('html');
      const expected = site.graph.expected({ depth: 1 });
      expect(urlsOf(results).sort()).to.deep.equal([...expected.keys()].sort());
      // depth 1: the start page opened, every kept page fetched once for its HTML.
      expect(crawl.coverage.pages_fetched).to.equal(1 + results.length);
      for (const result of results) {
        expect(result.content_status).to.equal('fetched');
        expect(result.content_url).to.match(new RegExp(`^/v1/crawls/${crawlId}/contents/\\d+-\\d+$`));
      }
      const first = results[0] as Json;
      const page = await fetch(`${client.api}${first.content_url as string}`, { headers: { 'X-API-Key': client.account.key } });
      expect(page.status).to.equal(200);
      expect(page.headers.get('content-type')).to.match(/^text\/html/);
      // The target's page, from our origin: sandboxed, never sniffed, shown in place unless download=true.
      expect(page.headers.get('content-security-policy')).to.equal('sandbox');
      expect(page.headers.get('x-content-type-options')).to.equal('nosniff');
      expect(page.headers.get('content-disposition')).to.match(/^inline; filename="\d+-\d+\.html"$/);
      expect(await page.text()).to.match(/<h1>(Page|Post) \d+<\/h1>/);
      const saved = await fetch(`${client.api}${first.content_url as string}?download=true`, { headers: { 'X-API-Key': client.account.key } });
      expect(saved.headers.get('content-disposition')).to.match(/^attachment; filename="\d+-\d+\.html"$/);
      expect(saved.headers.get('content-security-policy')).to.equal('sandbox');
      const missing = await client.request('GET', `/v1/crawls/${crawlId}/contents/999-0`);
      expect([missing.status, missing.body.code]).to.deep.equal([404, 'content_not_found']);

      const download = await fetch(`${client.api}/v1/crawls/${crawlId}/download`, { headers: { 'X-API-Key': client.account.key } });
      const lines = (await download.text()).trim().split('\n').map((line) => JSON.parse(line) as Json);
      expect(lines.map((line) => line.url).sort()).to.deep.equal(urlsOf(results).sort());
      for (const line of lines) {
        expect(line.content_status).to.equal('fetched');
        expect(line.content).to.match(/^<!doctype html>/);
      }
    });

    it('marks pages that failed to load as failed, and has no contents without output_format', async () => {
      const special = await startCrawlSite({ pages: 3, fanout: 0, specials: true, name: 'special' });
      try {
        const crawlId = await client.started({ url: special.url, depth: 1, output_format: 'html' });
        await client.finish(crawlId);
        const { results } = await client.finish(crawlId, { limit: 10_000 });
        const byPath = Object.fromEntries(results.map((result) => [new URL(result.url as string).pathname, result]));
        expect(byPath['/missing']?.content_status).to.equal('failed');
        expect(byPath['/gone']?.content_status).to.equal('failed');
        expect(byPath['/missing']).to.not.have.property('content_url');
        expect(byPath['/p/1']?.content_status).to.equal('fetched');

        const plain = await client.started({ url: special.url, depth: 1 });
        const plainResults = (await client.finish(plain)).results;
        expect(plainResults.every((result) => Object.keys(result).join() === 'url')).to.equal(true);
        const none = await client.request('GET', `/v1/crawls/${plain}/contents/0-0`);
        expect([none.status, none.body.code]).to.deep.equal([404, 'content_not_found']);
      } finally {
        await special.close();
      }
    });
  });

  describe('what the official clients send: discovery and output_format markdown', () => {
    it('accepts discovery ["links"], refuses "pagination" with a message that says why, and serves Markdown contents and downloads', async () => {
      const refused = await client.request('POST', '/v1/crawls', { body: { url: site.url, depth: 1, discovery: ['pagination'] } });
      expect([refused.status, refused.body.code]).to.deep.equal([422, 'invalid_parameter']);
      expect(refused.body.detail).to.contain('pagination');

      // Sent as a client may spell it; echoed as the URL standard writes it.
      const crawlId = await client.started({ url: site.url.replace(/^http:/, 'HTTP:'), depth: 1, discovery: ['links'], output_format: 'markdown', max_items: 1000, max_pages: 1000 });
      await client.finish(crawlId);
      const { crawl, results } = await client.finish(crawlId, { limit: 10_000 });
      expect(crawl.output_format).to.equal('markdown');
      expect(crawl.discovery).to.deep.equal(['links']);
      expect(crawl.url).to.equal(new URL(site.url).href);
      const first = results.find((result) => result.content_status === 'fetched') as Json;
      const page = await fetch(`${client.api}${first.content_url as string}`, { headers: { 'X-API-Key': client.account.key } });
      expect(page.headers.get('content-type')).to.equal('text/markdown; charset=utf-8');
      expect(page.headers.get('content-security-policy')).to.equal('sandbox');
      expect(page.headers.get('content-disposition')).to.match(/^inline; filename="\d+-\d+\.md"$/);
      const text = await page.text();
      expect(text).to.match(/^# (Page|Post) \d+$/m);
      expect(text).to.not.contain('<h1>');
      const download = await fetch(`${client.api}/v1/crawls/${crawlId}/download`, { headers: { 'X-API-Key': client.account.key } });
      const lines = (await download.text()).trim().split('\n').map((line) => JSON.parse(line) as Json);
      const fetched = lines.filter((line) => line.content_status === 'fetched');
      expect(fetched).to.not.have.length(0);
      for (const line of fetched) expect(line.content).to.match(/^# (Page|Post) \d+$/m);
    });
  });
});
