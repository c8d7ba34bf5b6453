import { expect } from 'chai';
import { derivedUlid } from '../../../base/ids';
import { crawlEventBody, crawlEventId, crawlEventKey, endEvent, failedPage, wants, type CrawlMoment } from '../../../core/webhooks/crawl-events';
import { webhookEvents } from '../../../core/crawls/webhook';
import { WEBHOOK_SCHEMA } from '../../../core/webhooks/events';

describe('crawl webhook events', () => {
  const createdAt = '2026-11-27T17:00:00.000Z';

  it('keys one event per moment: one start, one end whatever its status, one per page URL', () => {
    expect(crawlEventKey('c_1', 'started')).to.equal('crawl:c_1:started');
    expect(crawlEventKey('c_1', 'completed')).to.equal(crawlEventKey('c_1', 'failed'));
    expect(crawlEventKey('c_1', 'stopped')).to.equal('crawl:c_1:end');
    const page = crawlEventKey('c_1', 'page.failed', 'https://a.test/x');
    expect(page).to.equal(crawlEventKey('c_1', 'page.failed', 'https://a.test/x'));
    expect(page).to.not.equal(crawlEventKey('c_1', 'page.failed', 'https://a.test/y'));
    expect(page).to.not.equal(crawlEventKey('c_2', 'page.failed', 'https://a.test/x'));
    expect(page.startsWith('crawl:c_1:page:')).to.equal(true);
  });

  it('derives the same ULID-shaped event id for the same key, with the crawl’s creation as its time', () => {
    const id = crawlEventId(createdAt, 'crawl:c_1:started');
    expect(id).to.match(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(crawlEventId(createdAt, 'crawl:c_1:started')).to.equal(id);
    expect(crawlEventId(createdAt, 'crawl:c_1:end')).to.not.equal(id);
    // The time part sorts like a ULID made at the crawl's creation.
    expect(id.slice(0, 10)).to.equal(derivedUlid(Date.parse(createdAt), 'anything').slice(0, 10));
    expect(derivedUlid(Date.parse(createdAt) + 1000, 'x').slice(0, 10) > id.slice(0, 10)).to.equal(true);
  });

  it('defaults to the four lifecycle moments, page.failed only when listed, in one order', () => {
    expect(webhookEvents(undefined)).to.deep.equal(['started', 'completed', 'stopped', 'failed']);
    expect(webhookEvents(['page.failed', 'completed'])).to.deep.equal(['completed', 'page.failed']);
    const webhook = { url: 'https://r.test/', signature: false, events: webhookEvents(['failed']) };
    expect(wants(webhook, 'failed')).to.equal(true);
    expect(wants(webhook, 'started')).to.equal(false);
    expect(wants(undefined, 'started')).to.equal(false);
    expect(endEvent('stopped')).to.equal('stopped');
  });

  it('tells a failed page by the site’s status, or by the kind of failure when nothing came back', () => {
    expect(failedPage('https://a.test/404', { httpStatus: 404, detail: 'The page answered 404.' })).to.deep.equal({
      url: 'https://a.test/404',
      status_code: 404,
      error: 'http_4xx:404',
      detail: 'The page answered 404.',
    });
    expect(failedPage('https://a.test/503', { httpStatus: 503 })).to.deep.equal({ url: 'https://a.test/503', status_code: 503, error: 'http_5xx:503' });
    expect(failedPage('https://a.test/t', { errorKind: 'timeout', detail: 'no answer' })).to.deep.equal({ url: 'https://a.test/t', error: 'timeout', detail: 'no answer' });
    expect(failedPage('https://a.test/u', {})).to.deep.equal({ url: 'https://a.test/u', error: 'fetch_failed' });
  });

  it('writes the body with the schema, the crawl, its counts and its times', () => {
    const moment: CrawlMoment = {
      crawlId: 'c_1',
      accountId: 'a_1',
      url: 'https://site.test/',
      createdAt,
      webhook: { url: 'https://r.test/hook', signature: true, events: ['completed'] },
      event: 'completed',
      status: 'completed',
      coverage: { pages_fetched: 7, pages_failed: 1, items_found: 9 },
      finishedAt: '2026-11-27T17:01:00.000Z',
      stopReason: 'max_items',
    };
    const body = crawlEventBody(moment, 'EVT', new Date('2026-11-27T17:01:02.000Z'));
    expect(body).to.deep.equal({
      schema: WEBHOOK_SCHEMA,
      event_id: 'EVT',
      event_type: 'crawl.completed',
      occurred_at: '2026-11-27T17:01:02.000Z',
      crawl_id: 'c_1',
      status: 'completed',
      url: 'https://site.test/',
      coverage: { pages_fetched: 7, pages_failed: 1, items_found: 9 },
      created_at: createdAt,
      finished_at: '2026-11-27T17:01:00.000Z',
      stop_reason: 'max_items',
    });
    const page = crawlEventBody({ ...moment, event: 'page.failed', status: 'running', finishedAt: undefined, stopReason: undefined, page: { url: 'https://site.test/x', status_code: 500, error: 'http_5xx:500' } }, 'P', new Date(0));
    expect(page).to.include({ event_type: 'crawl.page.failed', status: 'running' });
    expect(page).to.not.have.property('finished_at');
    expect(page.page).to.deep.equal({ url: 'https://site.test/x', status_code: 500, error: 'http_5xx:500' });
  });
});
