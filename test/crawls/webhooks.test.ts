/**
 * Crawl webhooks (our extension) through the running service: a local https receiver, the account's
 * HMAC key, and a small site of our own on loopback whose pages answer as each test needs.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { WEBHOOK_ATTEMPTS, WEBHOOK_EVENTS } from '../../core/webhooks/events';
import { startWebhookReceiver, type Delivery, type WebhookReceiver } from '../fixtures/webhook-receiver';
import { eventually, FIXTURE_DOMAIN, testStack } from '../helpers/stack';
import { connectTemporal } from '../../base/temporal';
import { crawlAnnouncer } from '../../core/crawls/work';
import { webhookRetry } from '../../core/webhooks/deliveries';
import type { CrawlSpec } from '../../core/crawls/types';
import { crawlWorkflowStart } from '../../core/crawls/starts';
import { newCrawlDocument } from '../../core/crawls/store';
import { CRAWL_WORKFLOW_TYPE, crawlWorkflowId, STOP_CRAWL_SIGNAL } from '../../core/jobs/workflow-names';
import { serviceConfig } from '../helpers/app';
import { pythonVerifies } from '../webhooks/helpers';
import { accountsHandle, collections, CrawlClient, crawlAccount, sleep, type Json } from './helpers';

interface HookSite {
  /** `http://www.<name>.fixture.test:<port>/` */
  url: string;
  /** Requests served per path. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

/** A site of named pages: `/` links to every other path; a page answers its status, after `delayMs`. */
async function startHookSite(name: string, pages: Record<string, number>, delayMs = 0): Promise<HookSite> {
  const paths = Object.keys(pages).filter((path) => path !== '/');
  const hits = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const status = pages[path];
    const answer = () => {
      if (status === undefined) {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('not found');
        return;
      }
      const links = path === '/' ? paths.map((link) => `<a href="${link}">${link}</a>`).join('') : '';
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><html><body><h1>${path}</h1>${links}</body></html>`);
    };
    if (delayMs > 0 && path !== '/' && path !== '/robots.txt') setTimeout(answer, delayMs);
    else answer();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://www.${name}.${FIXTURE_DOMAIN}:${port}/`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const bodyOf = (delivery: Delivery): Json => JSON.parse(delivery.body.toString('utf8')) as Json;
const typesOf = (deliveries: Delivery[]): string[] => deliveries.map((delivery) => bodyOf(delivery).event_type as string).sort();

describe('crawls: webhooks', function () {
  let client: CrawlClient;
  let secret: { kid: string; secret: string };
  let receiver: WebhookReceiver;

  before(async () => {
    client = new CrawlClient(await crawlAccount());
    const created = await client.request('POST', '/v1/hmac/keys/rotate');
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    secret = { kid: created.body.kid as string, secret: created.body.secret as string };
  });
  beforeEach(async () => {
    receiver = await startWebhookReceiver();
  });
  afterEach(() => receiver.close());

  /** The crawl's stored events (one per moment), once each has been delivered. */
  async function storedEvents(crawlId: string, count: number): Promise<Json[]> {
    const events = (await accountsHandle()).db.db.collection(WEBHOOK_EVENTS);
    let found: Json[] = [];
    await eventually(async () => {
      found = await events.find({ crawl_id: crawlId }).toArray();
      return found.length >= count && found.every((event) => event.state !== 'pending');
    }, 150);
    return found;
  }

  function verified(delivery: Delivery): Json {
    const body = bodyOf(delivery);
    expect(delivery.headers['x-service-event-id']).to.equal(body.event_id);
    expect(delivery.headers['user-agent']).to.equal('service-webhook/v1');
    expect(pythonVerifies(delivery.body, String(delivery.headers['x-signature']), { [secret.kid]: secret.secret }), 'signature').to.equal(true);
    return body;
  }

  it('tells a signed webhook that the crawl started, then completed: one event each, verified, with its counts', async () => {
    const site = await startHookSite('hooks-done', { '/': 200, '/a': 200, '/b': 200, '/gone': 404 });
    try {
      const crawlId = await client.started({ url: site.url, webhook: { url: receiver.url(), signature: true } });
      const { crawl } = await client.finish(crawlId);
      expect(crawl.status).to.equal('completed');
      expect(crawl.webhook).to.deep.equal({ url: receiver.url(), signature: true, events: ['started', 'completed', 'stopped', 'failed'] });
      const stored = await storedEvents(crawlId, 2);
      expect(stored.map((event) => event.state)).to.deep.equal(['delivered', 'delivered']);
      expect(typesOf(receiver.deliveries)).to.deep.equal(['crawl.completed', 'crawl.started']);
      const bodies = receiver.deliveries.map(verified);
      const started = bodies.find((body) => body.event_type === 'crawl.started') as Json;
      const completed = bodies.find((body) => body.event_type === 'crawl.completed') as Json;
      expect(started).to.include({ schema: 'service.webhook/v1', crawl_id: crawlId, status: 'running', url: site.url, created_at: crawl.created_at });
      expect(started.coverage).to.deep.equal({ pages_fetched: 0, pages_failed: 0, items_found: 0 });
      expect(completed).to.include({ crawl_id: crawlId, status: 'completed', created_at: crawl.created_at, finished_at: crawl.finished_at });
      // The counts are the crawl's final ones: the 404 page is a failed page, and page.failed was not asked for.
      expect(completed.coverage).to.deep.equal(crawl.coverage);
      expect(completed.coverage.pages_failed).to.equal(1);
      expect(started.event_id).to.not.equal(completed.event_id);
    } finally {
      await site.close();
    }
  });

  it('sends crawl.page.failed only when asked, once per failed page, with its status', async () => {
    const site = await startHookSite('hooks-pages', { '/': 200, '/ok': 200, '/missing': 404, '/removed': 410 });
    try {
      const crawlId = await client.started({ url: site.url, webhook: { url: receiver.url(), signature: true, events: ['page.failed', 'completed'] } });
      const { crawl } = await client.finish(crawlId);
      expect(crawl.webhook.events).to.deep.equal(['completed', 'page.failed']);
      await storedEvents(crawlId, 3);
      expect(typesOf(receiver.deliveries)).to.deep.equal(['crawl.completed', 'crawl.page.failed', 'crawl.page.failed']);
      const pages = receiver.deliveries
        .map(verified)
        .filter((body) => body.event_type === 'crawl.page.failed')
        .map((body) => body.page as Json)
        .sort((a, b) => String(a.url).localeCompare(String(b.url)));
      expect(pages.map((page) => [page.url, page.status_code, page.error])).to.deep.equal([
        [`${site.url}missing`, 404, 'http_4xx:404'],
        [`${site.url}removed`, 410, 'http_4xx:410'],
      ]);
      expect(new Set(receiver.deliveries.map((delivery) => delivery.headers['x-service-event-id'])).size).to.equal(3);
    } finally {
      await site.close();
    }
  });

  it('tells crawl.failed when the start page cannot be read', async () => {
    const site = await startHookSite('hooks-seed', { '/other': 200 });
    try {
      const crawlId = await client.started({ url: site.url, webhook: { url: receiver.url(), signature: true } });
      const { crawl } = await client.finish(crawlId);
      expect(crawl.status).to.equal('failed');
      await storedEvents(crawlId, 2);
      expect(typesOf(receiver.deliveries)).to.deep.equal(['crawl.failed', 'crawl.started']);
      const failed = receiver.deliveries.map(verified).find((body) => body.event_type === 'crawl.failed') as Json;
      expect(failed).to.include({ crawl_id: crawlId, status: 'failed', finished_at: crawl.finished_at });
      expect(failed.error).to.deep.equal(crawl.error);
      expect(failed.error.code).to.equal('seed_unreachable');
    } finally {
      await site.close();
    }
  });

  it('tells crawl.stopped when the crawl is stopped', async () => {
    const pages: Record<string, number> = { '/': 200 };
    for (let index = 0; index < 40; index++) pages[`/slow/${index}`] = 200;
    const site = await startHookSite('hooks-stop', pages, 1_500);
    try {
      const crawlId = await client.started({ url: site.url, webhook: { url: receiver.url(), signature: false, events: ['stopped', 'completed'] } });
      await client.until(crawlId, (crawl) => crawl.coverage?.pages_fetched >= 1, 60_000);
      const stop = await client.stop(crawlId);
      expect(stop.status).to.equal(200);
      const { crawl } = await client.finish(crawlId);
      expect(crawl.status).to.equal('stopped');
      await storedEvents(crawlId, 1);
      expect(typesOf(receiver.deliveries)).to.deep.equal(['crawl.stopped']);
      const [delivery] = receiver.deliveries;
      expect(delivery?.headers['x-signature'], 'unsigned').to.equal(undefined);
      const body = bodyOf(delivery as Delivery);
      expect(body).to.include({ crawl_id: crawlId, status: 'stopped', stop_reason: 'user', finished_at: stop.body.finished_at });
      expect(body.coverage).to.deep.equal(crawl.coverage);
    } finally {
      await site.close();
    }
  });

  it('refuses a bad webhook before anything starts', async () => {
    const site = await startHookSite('hooks-refused', { '/': 200 });
    const fresh = new CrawlClient(await crawlAccount());
    try {
      const http = await fresh.start({ url: site.url, webhook: { url: receiver.url().replace('https:', 'http:') } });
      expect(http.status).to.equal(400);
      expect(http.body.code).to.equal('callback_url_must_be_https');
      // The fresh account has no HMAC key.
      const unsigned = await fresh.start({ url: site.url, webhook: { url: receiver.url(), signature: true } });
      expect(unsigned.status).to.equal(400);
      expect(unsigned.body.code).to.equal('webhook_signing_requires_active_key');
      const unknown = await fresh.start({ url: site.url, webhook: { url: receiver.url(), events: ['completed', 'finished'] } });
      expect(unknown.status).to.equal(422);
      expect(unknown.body.code).to.equal('invalid_parameter');
      expect(unknown.body.detail).to.contain('webhook.events');
      expect(unknown.body.detail).to.contain('page.failed');
      expect(unknown.body.parameter).to.equal('webhook.events');
      const extra = await fresh.start({ url: site.url, webhook: { url: receiver.url(), secret: 'x' } });
      expect(extra.status).to.equal(400);
      expect(extra.body.detail).to.contain('webhook');
      const list = await fresh.request('GET', '/v1/crawls');
      expect(list.status).to.equal(200);
      expect(list.body.crawls).to.deep.equal([]);
      await sleep(500);
      expect(receiver.deliveries).to.deep.equal([]);
    } finally {
      await site.close();
    }
  });

  it('retries a receiver that answers 500 first, with the same event id and bytes', async () => {
    receiver.script.statuses = [500, 200];
    const site = await startHookSite('hooks-retry', { '/': 200, '/a': 200 });
    try {
      const crawlId = await client.started({ url: site.url, webhook: { url: receiver.url(), signature: true, events: ['completed'] } });
      await client.finish(crawlId);
      const [event] = await storedEvents(crawlId, 1);
      expect(event).to.include({ state: 'delivered', attempts: 2 });
      expect(receiver.deliveries).to.have.length(2);
      const [first, second] = receiver.deliveries as [Delivery, Delivery];
      expect(second.headers['x-service-event-id']).to.equal(first.headers['x-service-event-id']);
      expect(second.body.equals(first.body)).to.equal(true);
      expect(verified(second).event_type).to.equal('crawl.completed');
      const attempts = await (await accountsHandle()).db.db.collection(WEBHOOK_ATTEMPTS).find({ event_id: event?.event_id }).sort({ attempt: 1 }).toArray();
      expect(attempts.map((attempt) => [attempt.attempt, attempt.status_code])).to.deep.equal([
        [1, 500],
        [2, 200],
      ]);
    } finally {
      await site.close();
    }
  });

  it('writes and delivers each moment once when the step that tells it runs again', async () => {
    const config = serviceConfig();
    const temporal = connectTemporal(config);
    try {
      const announcer = crawlAnnouncer({ db: (await accountsHandle()).db.db, client: temporal.client, taskQueue: config.temporalTaskQueue, retry: webhookRetry(config) });
      const crawlId = `c_again${process.pid}${Date.now().toString(36)}`;
      const spec: CrawlSpec = {
        crawlId,
        accountId: client.account.accountId,
        keyId: client.account.keyId,
        url: 'https://www.again.fixture.test/',
        domain: 'fixture.test',
        maxItems: 10,
        maxPages: 10,
        include: [],
        exclude: [],
        webhook: { url: receiver.url(), signature: true, events: ['started', 'page.failed'] },
        createdAt: new Date().toISOString(),
      };
      const page = { url: 'https://www.again.fixture.test/x', status_code: 404, error: 'http_4xx:404' };
      // A retried slice: its start and its failed page told again, the same page twice in one call too.
      await announcer.started(spec);
      await announcer.pagesFailed(spec, [page, page]);
      await announcer.started(spec);
      await announcer.pagesFailed(spec, [page]);
      const stored = await storedEvents(crawlId, 2);
      expect(stored).to.have.length(2);
      await sleep(1_500);
      expect(typesOf(receiver.deliveries)).to.deep.equal(['crawl.page.failed', 'crawl.started']);
      expect(new Set(receiver.deliveries.map((delivery) => delivery.headers['x-service-event-id']))).to.deep.equal(new Set(stored.map((event) => event.event_id)));
    } finally {
      await temporal.close();
    }
  });

  it('tells each moment once when the worker is killed mid-crawl', async function () {
    this.timeout(300_000);
    const pages: Record<string, number> = { '/': 200 };
    for (let index = 0; index < 60; index++) pages[`/p/${index}`] = index % 3 === 0 ? 404 : 200;
    // Slow pages: the slices are still fetching when the worker is killed.
    const site = await startHookSite('hooks-kill', pages, 1_000);
    try {
      const crawlId = await client.started({ url: site.url, webhook: { url: receiver.url(), signature: true, events: ['started', 'completed', 'page.failed'] } });
      await client.until(crawlId, (crawl) => crawl.coverage?.pages_fetched >= 1, 60_000);
      await testStack().component('worker').kill();
      await sleep(1_000);
      await testStack().startOne('worker');
      const { crawl } = await client.finish(crawlId, { timeoutMs: 240_000 });
      expect(crawl.status).to.equal('completed');
      expect(crawl.coverage.pages_failed).to.equal(20);
      const stored = await storedEvents(crawlId, 22);
      const types = stored.map((event) => (JSON.parse(event.body as string) as Json).event_type as string);
      expect(types.filter((type) => type === 'crawl.started')).to.have.length(1);
      expect(types.filter((type) => type === 'crawl.completed')).to.have.length(1);
      expect(types.filter((type) => type === 'crawl.page.failed')).to.have.length(20);
      expect(stored).to.have.length(22);
      // At least once: a delivery cut short by the kill may arrive again, always under its one event id.
      const ids = new Set(receiver.deliveries.map((delivery) => delivery.headers['x-service-event-id']));
      expect(ids).to.deep.equal(new Set(stored.map((event) => event.event_id)));
      // The kill cut slices short: they ran again (their pages were asked for again), and told nothing twice.
      const again = [...site.hits].filter(([path, count]) => path.startsWith('/p/') && count > 1);
      expect(again.length, 'pages fetched again by a retried slice').to.be.greaterThan(0);
      const failedUrls = receiver.deliveries.map(bodyOf).filter((body) => body.event_type === 'crawl.page.failed').map((body) => (body.page as Json).url as string);
      expect(new Set(failedUrls).size).to.equal(20);
    } finally {
      await site.close();
    }
  });

  it('lists a crawl’s deliveries as a Batch job’s are listed: newest first, every attempt, its account only', async () => {
    // The first delivery to arrive (whichever event it carries) is answered 500, then retried.
    receiver.script.statuses = [500, 200];
    const site = await startHookSite('hooks-list', { '/': 200, '/a': 200 });
    try {
      const crawlId = await client.started({ url: site.url, webhook: { url: receiver.url(), signature: true, events: ['started', 'completed'] } });
      await client.finish(crawlId);
      const stored = (await storedEvents(crawlId, 2)).sort((a, b) => (b.created_at as Date).getTime() - (a.created_at as Date).getTime());
      const answer = await client.request('GET', `/v1/crawls/${crawlId}/webhook/deliveries`);
      expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
      expect(Object.keys(answer.body)).to.deep.equal(['deliveries']);
      const deliveries = answer.body.deliveries as Json[];
      expect(deliveries.map((delivery) => delivery.event_id)).to.deep.equal(stored.map((event) => event.event_id));
      expect(deliveries.map((delivery) => delivery.event_type)).to.deep.equal(['crawl.completed', 'crawl.started']);
      for (const delivery of deliveries) {
        expect(Object.keys(delivery).sort()).to.deep.equal(['attempts', 'event_id', 'event_type', 'run_id', 'state', 'url']);
        expect(delivery).to.include({ run_id: crawlId, state: 'delivered', url: receiver.url() });
        const attempts = delivery.attempts as Json[];
        expect(attempts.map((attempt) => attempt.attempt)).to.deep.equal(attempts.map((_, index) => index + 1));
        expect(attempts.at(-1)?.status_code).to.equal(200);
        for (const attempt of attempts) expect(Number.isNaN(Date.parse(attempt.at as string)), 'attempt time').to.equal(false);
      }
      // Three attempts in all: the one answered 500 and the two answered 200, as the receiver saw them.
      const codes = deliveries.flatMap((delivery) => (delivery.attempts as Json[]).map((attempt) => attempt.status_code as number));
      expect(codes.sort()).to.deep.equal([200, 200, 500]);
      expect(receiver.deliveries).to.have.length(3);

      const stranger = new CrawlClient(await crawlAccount());
      for (const path of [`/v1/crawls/${crawlId}/webhook/deliveries`, '/v1/crawls/c_doesnotexist/webhook/deliveries', '/v1/crawls/not-an-id/webhook/deliveries']) {
        const refused = await stranger.request('GET', path);
        expect([refused.status, refused.body.code], path).to.deep.equal([404, 'crawl_not_found']);
      }
      const plain = await client.started({ url: site.url });
      await client.finish(plain);
      const none = await client.request('GET', `/v1/crawls/${plain}/webhook/deliveries`);
      expect([none.status, none.body]).to.deep.equal([200, { deliveries: [] }]);
    } finally {
      await site.close();
    }
  });

  it('tells crawl.started before crawl.stopped when the crawl is stopped before its first slice', async () => {
    const site = await startHookSite('hooks-early', { '/': 200, '/a': 200 });
    const config = serviceConfig();
    const temporal = connectTemporal(config);
    try {
      // A crawl as its start stores it, whose workflow sees the stop before anything else (as when the
      // stop call comes before a worker takes the workflow's first task): no slice ever runs.
      const crawlId = `c_early${process.pid}${Date.now().toString(36)}`;
      const doc = newCrawlDocument({
        _id: crawlId,
        account_id: client.account.accountId,
        key_id: client.account.keyId,
        url: site.url,
        domain: FIXTURE_DOMAIN,
        max_items: 10,
        max_pages: 10,
        include_patterns: [],
        exclude_patterns: [],
        webhook: { url: receiver.url(), signature: true, events: ['started', 'stopped', 'completed'] },
      });
      await (await collections()).crawls.insertOne(doc);
      await temporal.client.workflow.signalWithStart(CRAWL_WORKFLOW_TYPE, { ...crawlWorkflowStart(doc, config), signal: STOP_CRAWL_SIGNAL, signalArgs: [] });
      const { crawl } = await client.finish(crawlId, { timeoutMs: 60_000 });
      expect(crawl).to.include({ status: 'stopped', stop_reason: 'user' });
      expect(site.hits.size, 'no page was fetched').to.equal(0);
      const stored = await storedEvents(crawlId, 2);
      const typeOf = (event: Json): string => (JSON.parse(event.body as string) as Json).event_type as string;
      const started = stored.find((event) => typeOf(event) === 'crawl.started') as Json;
      const stopped = stored.find((event) => typeOf(event) === 'crawl.stopped') as Json;
      expect(stored).to.have.length(2);
      // Written first, and said to have happened first: at the crawl's creation.
      expect((started.created_at as Date).getTime()).to.be.lessThan((stopped.created_at as Date).getTime());
      const startedBody = JSON.parse(started.body as string) as Json;
      expect(startedBody).to.include({ crawl_id: crawlId, status: 'running', occurred_at: crawl.created_at, created_at: crawl.created_at });
      expect(Date.parse(startedBody.occurred_at as string)).to.be.at.most(Date.parse((JSON.parse(stopped.body as string) as Json).occurred_at as string));
      expect(typesOf(receiver.deliveries)).to.deep.equal(['crawl.started', 'crawl.stopped']);
      for (const delivery of receiver.deliveries) verified(delivery);
    } finally {
      await temporal.close();
      await site.close();
    }
  });

  it('tells crawl.failed once when the crawl’s workflow gives up, even with the worker killed as it does', async function () {
    this.timeout(300_000);
    const pages: Record<string, number> = { '/': 200 };
    for (let index = 0; index < 40; index++) pages[`/slow/${index}`] = 200;
    const site = await startHookSite('hooks-gone', pages, 1_500);
    const temporal = connectTemporal(serviceConfig());
    try {
      const crawlId = await client.started({ url: site.url, webhook: { url: receiver.url(), signature: true } });
      await client.until(crawlId, (crawl) => crawl.coverage?.pages_fetched >= 1, 60_000);
      // The workflow ends without settling the crawl (as a publish that failed for good ends it), and the
      // worker that would record the end is killed at once: another one must finish it.
      await temporal.client.workflow.getHandle(crawlWorkflowId(crawlId)).cancel();
      await testStack().component('worker').kill();
      await sleep(1_000);
      await testStack().startOne('worker');
      const { crawl } = await client.finish(crawlId, { timeoutMs: 180_000 });
      expect(crawl.status).to.equal('failed');
      expect(crawl.error.code).to.equal('internal_error');
      const stored = await storedEvents(crawlId, 2);
      expect(stored).to.have.length(2);
      // At least once: one delivery per event id, whatever the kill made arrive twice.
      const byEvent = new Map(receiver.deliveries.map((delivery) => [delivery.headers['x-service-event-id'], delivery]));
      expect(typesOf([...byEvent.values()])).to.deep.equal(['crawl.failed', 'crawl.started']);
      const failed = receiver.deliveries.map(verified).find((body) => body.event_type === 'crawl.failed') as Json;
      expect(failed).to.include({ crawl_id: crawlId, status: 'failed', finished_at: crawl.finished_at });
      expect(failed.error).to.deep.equal(crawl.error);
      expect(failed.coverage).to.deep.equal(crawl.coverage);
    } finally {
      await temporal.close();
      await site.close();
    }
  });
});
