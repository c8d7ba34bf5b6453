/**
 * A crawl-based monitor takes a crawl body as POST /v1/crawls does (the same refusals, nothing made)
 * and checks the pages that crawl would find; a listed page that is gone is one change, `removed`.
 */
import { expect } from 'chai';
import { startFixtureServer, type FixtureServer } from '../helpers/fixtures';
import { FIXTURE_DOMAIN } from '../helpers/stack';
import { startWebhookReceiver, type WebhookReceiver } from '../fixtures/webhook-receiver';
import { call, checkEvents, checkNow, monitorAccount, type MonitorAccount } from './helpers';
import type { Json } from '../webhooks/helpers';

const DAILY = { every: 1, unit: 'day' };

interface Page {
  status?: number;
  links: string[];
}

/** A site whose pages (static HTML, the same on every request) and links the test changes while it runs. */
async function startLinkSite(pages: Record<string, Page>): Promise<{ server: FixtureServer; pages: Map<string, Page>; hits(path: string): number }> {
  const map = new Map(Object.entries(pages));
  const server = await startFixtureServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const page = map.get(path);
    if (!page) {
      res.writeHead(404, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<html><body><h1>Not found</h1></body></html>');
      return;
    }
    const links = page.links.map((href) => `<li><a href="${href}">${href}</a></li>`).join('');
    res.writeHead(page.status ?? 200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><head><title>${path}</title></head><body><h1>Page ${path}</h1><ul>${links}</ul></body></html>`);
  });
  return { server, pages: map, hits: (path) => server.requests.filter((request) => request.url.split('?')[0] === path).length };
}

describe('monitors: a crawl body', function () {
  this.timeout(240_000);
  let account: MonitorAccount;
  let receiver: WebhookReceiver;

  before(async () => {
    account = await monitorAccount();
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await receiver.close();
  });

  const changed = (check: Json, status: string): string[] =>
    (check.changes as Json[])
      .filter((page) => page.change_status === status)
      .map((page) => page.url as string)
      .sort();

  it('checks only the pages its crawl would find (patterns, depth, domain); a page added is new, one gone removed', async () => {
    const site = await startLinkSite({
      '/': { links: ['/docs/a', '/docs/b', '/blog/x', '/docs/private/p', '/docs/guide.pdf', 'http://elsewhere.example/docs/z'] },
      '/docs/a': { links: ['/docs/a/deep', '/blog/y', '/'] },
      '/docs/a/deep': { links: ['/docs/a/deeper'] },
      '/docs/a/deeper': { links: [] },
      '/docs/b': { links: ['/docs/a?utm_source=b'] },
      '/docs/c': { links: [] },
      '/blog/x': { links: ['/docs/from-blog'] },
      '/docs/from-blog': { links: [] },
      '/docs/private/p': { links: [] },
    });
    try {
      const origin = `http://www.scoped.${FIXTURE_DOMAIN}:${site.server.port}`;
      const crawl = { url: `${origin}/`, include_patterns: ['/docs/'], exclude_patterns: ['/private/'], depth: 2, max_pages: 20, include_documents: false };
      const created = await call(account, 'POST', '/v1/monitors', { name: 'docs', crawl, schedule: DAILY, webhook: { url: receiver.url('/docs'), signature: true } });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      expect(created.body.crawl).to.deep.equal({ url: `${origin}/`, depth: 2, max_items: 100, max_pages: 20, include_patterns: ['/docs/'], exclude_patterns: ['/private/'], respect_robots: true, include_documents: false });
      const monitorId = created.body.monitor_id as string;

      const baseline = await checkNow(account, monitorId);
      expect(baseline).to.include({ status: 'completed', pages_checked: 4, new: 4, failed: 0 });
      expect(changed(baseline, 'new')).to.deep.equal([`${origin}/`, `${origin}/docs/a`, `${origin}/docs/a/deep`, `${origin}/docs/b`]);
      // Outside the patterns, past the depth or off the domain: never requested.
      for (const path of ['/blog/x', '/blog/y', '/docs/from-blog', '/docs/private/p', '/docs/a/deeper', '/docs/guide.pdf']) expect(site.hits(path), path).to.equal(0);

      site.pages.delete('/docs/b');
      (site.pages.get('/') as Page).links = ['/docs/a', '/docs/c', '/blog/x', '/docs/private/p'];
      const next = await checkNow(account, monitorId);
      // The start page lists other links now: changed.
      expect(next).to.include({ status: 'completed', new: 1, removed: 1, changed: 1, failed: 0, same: 2, pages_checked: 4 });
      expect(changed(next, 'new')).to.deep.equal([`${origin}/docs/c`]);
      expect(changed(next, 'removed')).to.deep.equal([`${origin}/docs/b`]);
      expect(changed(next, 'changed')).to.deep.equal([`${origin}/`]);
      const events = await checkEvents(receiver, account, next);
      expect(events.filter((event) => String(event.event_type).startsWith('monitor.page.')).map((event) => [event.event_type, event.url])).to.have.deep.members([
        ['monitor.page.new', `${origin}/docs/c`],
        ['monitor.page.removed', `${origin}/docs/b`],
        ['monitor.page.changed', `${origin}/`],
      ]);
    } finally {
      await site.server.close();
    }
  });

  it('refuses a bad crawl body as POST /v1/crawls does, and one with a crawl job’s own fields by name; nothing is made', async () => {
    const other = await monitorAccount();
    const url = `http://www.refused.${FIXTURE_DOMAIN}:9/`;
    for (const crawl of [
      { url: 'ftp://www.refused.fixture.test/' },
      { url: 'http://127.0.0.1:9/' },
      { url, depth: 0 },
      { url, max_items: 100_001 },
      { url, include_patterns: 'docs' },
      { url, discovery: ['pagination'] },
      { url, limit: 10 },
      { url, change_tracking_tag: 'mine' },
      { url, main_content: true },
      { depth: 1 },
    ]) {
      const asCrawl = await call(other, 'POST', '/v1/crawls', crawl);
      expect(asCrawl.status, JSON.stringify([crawl, asCrawl.body])).to.be.within(400, 499);
      const asMonitor = await call(other, 'POST', '/v1/monitors', { crawl, schedule: DAILY });
      expect([asMonitor.status, asMonitor.body.code], JSON.stringify([crawl, asMonitor.body])).to.deep.equal([asCrawl.status, asCrawl.body.code]);
    }
    for (const [field, value] of Object.entries({ webhook: { url: 'https://example.com/hook' }, output_format: 'html', track_changes: true })) {
      const refused = await call(other, 'POST', '/v1/monitors', { crawl: { url, [field]: value }, schedule: DAILY });
      expect(refused.status, JSON.stringify(refused.body)).to.equal(400);
      expect(refused.body).to.include({ code: 'invalid_argument', parameter: `crawl.${field}` });
    }
    expect((await call(other, 'GET', '/v1/monitors')).body.monitors).to.deep.equal([]);
    expect((await call(other, 'GET', '/v1/crawls')).body.crawls).to.deep.equal([]);

    // A change to a bad crawl body is refused the same and leaves the monitor as it was.
    const made = await call(other, 'POST', '/v1/monitors', { urls: [`http://127.0.0.1:9/page`], schedule: DAILY });
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
    const patched = await call(other, 'PATCH', `/v1/monitors/${made.body.monitor_id}`, { crawl: { url, max_pages: 0 } });
    expect([patched.status, patched.body.code]).to.deep.equal([422, 'invalid_parameter']);
    const read = await call(other, 'GET', `/v1/monitors/${made.body.monitor_id}`);
    expect(read.body).to.include({ crawl: null });
    expect(read.body.urls).to.deep.equal(['http://127.0.0.1:9/page']);
  });

  it('counts a crawl’s pages against monitor_urls: the smaller of max_pages and 1 + max_items', async () => {
    const other = await monitorAccount();
    const url = `http://www.capped.${FIXTURE_DOMAIN}:9/`;
    // The free plan's 100: a crawl's default max_pages (100) takes them all, one more page is refused.
    const over = await call(other, 'POST', '/v1/monitors', { crawl: { url, max_pages: 101, max_items: 100 }, schedule: DAILY });
    expect(over.status, JSON.stringify(over.body)).to.equal(429);
    expect(over.body).to.include({ code: 'quota_exceeded', limit: 'monitor_urls' });
    const fits = await call(other, 'POST', '/v1/monitors', { crawl: { url, max_pages: 500, max_items: 99 }, schedule: DAILY });
    expect(fits.status, JSON.stringify(fits.body)).to.equal(201);
    const none = await call(other, 'POST', '/v1/monitors', { urls: [`http://127.0.0.1:9/one`], schedule: DAILY });
    expect(none.status, JSON.stringify(none.body)).to.equal(429);
  });

  it('a listed page answering 404 or 410 is one change, removed (not also failed), once', async () => {
    const site = await startLinkSite({ '/a': { links: [] }, '/b': { links: [] }, '/c': { links: [] } });
    try {
      const origin = `http://127.0.0.1:${site.server.port}`;
      const urls = ['/a', '/b', '/c'].map((path) => `${origin}${path}`);
      const created = await call(account, 'POST', '/v1/monitors', { name: 'gone', urls, schedule: DAILY, webhook: { url: receiver.url('/gone'), signature: true } });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const monitorId = created.body.monitor_id as string;
      expect(await checkNow(account, monitorId)).to.include({ status: 'completed', new: 3 });

      site.pages.delete('/b');
      (site.pages.get('/c') as Page).status = 410;
      const next = await checkNow(account, monitorId);
      expect(next).to.include({ status: 'completed', removed: 2, failed: 0, new: 0, changed: 0, same: 1 });
      expect((next.changes as Json[]).map((page) => [page.url, page.change_status]).sort()).to.deep.equal([
        [`${origin}/b`, 'removed'],
        [`${origin}/c`, 'removed'],
      ]);
      const events = await checkEvents(receiver, account, next);
      expect(events.filter((event) => String(event.event_type).startsWith('monitor.page.')).map((event) => [event.event_type, event.url]).sort()).to.deep.equal([
        ['monitor.page.removed', `${origin}/b`],
        ['monitor.page.removed', `${origin}/c`],
      ]);
      expect(events.find((event) => event.event_type === 'monitor.check.completed')?.counts).to.include({ removed: 2, failed: 0 });

      // Still gone: no longer one of the monitor's pages, so a failure now, and nothing announced.
      const later = await checkNow(account, monitorId);
      expect(later).to.include({ status: 'completed', removed: 0, failed: 2, same: 1 });
      const quiet = await checkEvents(receiver, account, later);
      expect(quiet.map((event) => event.event_type)).to.deep.equal(['monitor.check.completed']);
    } finally {
      await site.server.close();
    }
  });
});
