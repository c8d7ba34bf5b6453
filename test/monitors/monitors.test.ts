import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'chai';
import { startChangeSite, type ChangeSite } from '../fixtures/changes/site';
import { connectTemporal } from '../../base/temporal';
import { RETENTION_SCHEDULE_ID } from '../../core/retention';
import { accountsHandle } from '../crawls/helpers';
import { startFixtureServer } from '../helpers/fixtures';
import { triggerScheduleNow } from '../helpers/schedules';
import { startWebhookReceiver, type WebhookReceiver } from '../fixtures/webhook-receiver';
import { eventually, FIXTURE_DOMAIN, testStack } from '../helpers/stack';
import { call, checkEvents, checkNow, eventsOf, monitorAccount, waitForCheck, type MonitorAccount } from './helpers';

const PRODUCT = { title: 'h1', price: '.price', stock: '.stock' };
const DAILY = { every: 1, unit: 'day' };

describe('monitors: checks on a schedule, one signed event per change', function () {
  this.timeout(240_000);
  let site: ChangeSite;
  let receiver: WebhookReceiver;
  let account: MonitorAccount;

  before(async () => {
    site = await startChangeSite({ pages: 16 });
    receiver = await startWebhookReceiver();
    account = await monitorAccount();
  });
  after(async () => {
    await receiver.close();
    await site.close();
  });

  const products = (): number[] => site.ids().filter((id) => site.model(id).price !== undefined);

  it('announces nothing at the baseline nor on noise, then exactly one signed monitor.page.changed per edited page with its field diff', async () => {
    const ids = products().slice(0, 3);
    expect(ids).to.have.length(3);
    const created = await call(account, 'POST', '/v1/monitors', { name: 'prices', urls: ids.map((id) => site.url(id)), schedule: DAILY, css_extractor: PRODUCT, webhook: { url: receiver.url('/prices'), signature: true } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body).to.include({ status: 'active' });
    expect(Date.parse(created.body.next_check_at as string)).to.be.greaterThan(Date.now());
    const monitorId = created.body.monitor_id as string;

    const baseline = await checkNow(account, monitorId);
    expect(baseline).to.include({ status: 'completed', baseline: true, pages_checked: 3, new: 3, changed: 0 });
    expect(baseline.credits).to.equal(3);
    const baselineEvents = await checkEvents(receiver, account, baseline);
    expect(baselineEvents.map((event) => event.event_type)).to.deep.equal(['monitor.check.completed']);

    const noise = await checkNow(account, monitorId);
    expect(noise).to.include({ status: 'completed', baseline: false, pages_checked: 3, same: 3, changed: 0, new: 0, removed: 0, credits: 3 });
    const noiseEvents = await checkEvents(receiver, account, noise);
    expect(noiseEvents.map((event) => event.event_type)).to.deep.equal(['monitor.check.completed']);
    expect(noiseEvents[0]?.counts).to.deep.include({ changed: 0, same: 3 });

    site.edit(ids[0] as number, 'price');
    site.edit(ids[1] as number, 'price');
    const edited = await checkNow(account, monitorId);
    expect(edited).to.include({ status: 'completed', changed: 2, same: 1 });
    const events = await checkEvents(receiver, account, edited);
    const changed = events.filter((event) => event.event_type === 'monitor.page.changed');
    expect(changed.map((event) => event.url).sort()).to.deep.equal([site.url(ids[0] as number), site.url(ids[1] as number)].sort());
    const price = changed.find((event) => event.url === site.url(ids[0] as number));
    expect(price?.change_status).to.equal('changed');
    expect(Object.keys(price?.diff.fields ?? {})).to.deep.equal(['price']);
    expect(price?.diff.fields.price.current).to.equal(site.model(ids[0] as number).price);
    expect(price?.diff.text).to.include(site.model(ids[0] as number).price);
    expect(Date.parse(price?.previous_fetched_at)).to.be.lessThan(Date.parse(price?.fetched_at));
    const second = changed.find((event) => event.url === site.url(ids[1] as number));
    expect(Object.keys(second?.diff.fields ?? {})).to.deep.equal(['price']);
    expect(events.filter((event) => event.event_type !== 'monitor.page.changed').map((event) => event.event_type)).to.deep.equal(['monitor.check.completed']);

    // The check's detail shows the same changes with their diffs.
    const detail = await call(account, 'GET', `/v1/monitors/${monitorId}/checks/${edited.check_id}`);
    expect(detail.body.changes.map((change: { url: string }) => change.url).sort()).to.deep.equal(changed.map((event) => event.url).sort());
    const listed = await call(account, 'GET', `/v1/monitors/${monitorId}/checks?limit=2`);
    expect(listed.body.checks.map((check: { check_id: string }) => check.check_id)).to.deep.equal([edited.check_id, noise.check_id]);
    const rest = await call(account, 'GET', `/v1/monitors/${monitorId}/checks?limit=2&cursor=${listed.body.next_cursor}`);
    expect(rest.body.checks.map((check: { check_id: string }) => check.check_id)).to.deep.equal([baseline.check_id]);
    expect(rest.body.next_cursor).to.equal(null);
  });

  it('fires on its own schedule; pause, resume and delete each work, and a deleted monitor sends nothing more', async () => {
    const id = site.ids().at(-1) as number;
    const created = await call(account, 'POST', '/v1/monitors', { name: 'often', urls: [site.url(id)], schedule: { every: 2, unit: 'second' }, webhook: { url: receiver.url('/often'), signature: true } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const monitorId = created.body.monitor_id as string;
    const scheduledChecks = async (): Promise<Array<Record<string, unknown>>> => (await call(account, 'GET', `/v1/monitors/${monitorId}/checks?limit=100`)).body.checks.filter((check: { trigger: string }) => check.trigger === 'scheduled');
    const ended = async (): Promise<number> => (await scheduledChecks()).filter((check) => check.status === 'completed').length;
    await eventually(async () => (await ended()) >= 2, 150, 200);

    const paused = await call(account, 'POST', `/v1/monitors/${monitorId}/pause`);
    expect(paused.body).to.include({ status: 'paused', next_check_at: null });
    // A check in flight when paused ends; after it, none starts.
    await eventually(async () => (await scheduledChecks()).every((check) => check.status !== 'running'), 100, 200);
    const whilePaused = (await scheduledChecks()).length;
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect((await scheduledChecks()).length).to.equal(whilePaused);

    const resumed = await call(account, 'POST', `/v1/monitors/${monitorId}/resume`);
    expect(resumed.body.status).to.equal('active');
    await eventually(async () => (await scheduledChecks()).length > whilePaused, 150, 200);

    const deleted = await call(account, 'DELETE', `/v1/monitors/${monitorId}`);
    expect(deleted.status).to.equal(204);
    expect((await call(account, 'GET', `/v1/monitors/${monitorId}`)).status).to.equal(404);
    // A check that began before the deletion may still end; then nothing more comes.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const after = receiver.deliveries.filter((delivery) => delivery.path === '/often').length;
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    expect(receiver.deliveries.filter((delivery) => delivery.path === '/often').length).to.equal(after);
    expect(eventsOf(receiver, account).filter((event) => event.monitor_id === monitorId && String(event.event_type).startsWith('monitor.page.'))).to.deep.equal([]);
  });

  it('a crawl-based monitor: a page added is new, a page gone is removed', async () => {
    const crawlSite = await startChangeSite({ pages: 3, seed: 11, host: `www.monitored.${FIXTURE_DOMAIN}` });
    try {
      const created = await call(account, 'POST', '/v1/monitors', { name: 'shop', crawl: { url: `${crawlSite.origin}/`, depth: 1, max_pages: 10 }, schedule: DAILY, webhook: { url: receiver.url('/shop'), signature: true } });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const monitorId = created.body.monitor_id as string;
      const baseline = await checkNow(account, monitorId);
      expect(baseline).to.include({ status: 'completed', pages_checked: 4, new: 4 });
      const [gone] = crawlSite.ids();
      crawlSite.remove(gone as number);
      const added = crawlSite.add();
      const next = await checkNow(account, monitorId);
      expect(next).to.include({ status: 'completed', new: 1, removed: 1 });
      const events = await checkEvents(receiver, account, next);
      expect(events.filter((event) => event.event_type === 'monitor.page.new').map((event) => event.url)).to.deep.equal([crawlSite.url(added)]);
      expect(events.filter((event) => event.event_type === 'monitor.page.removed').map((event) => event.url)).to.deep.equal([crawlSite.url(gone as number)]);
      expect(events.find((event) => event.event_type === 'monitor.page.removed')?.change_status).to.equal('removed');
    } finally {
      await crawlSite.close();
    }
  });

  it('enforces the caps and the plan’s minimum interval; bad input creates nothing', async () => {
    const other = await monitorAccount();
    const url = site.url(products()[0] as number);
    const short = await call(other, 'POST', '/v1/monitors', { urls: [url], schedule: { every: 1, unit: 'second' } });
    expect(short.status).to.equal(400);
    expect(short.body).to.include({ minimum_interval_seconds: 2 });
    expect(short.body.detail).to.include('2 seconds');
    for (const body of [
      { urls: [url], crawl: { url }, schedule: DAILY },
      { urls: ['ftp://example.com/'], schedule: DAILY },
      { urls: [url], schedule: { every: 1, unit: 'week' } },
      { urls: [url], schedule: { cron: '* * *', timezone: 'UTC' } },
      { urls: [url], schedule: DAILY, extract: { price: 'the price' } },
      { urls: [url], schedule: DAILY, webhook: { url: 'http://127.0.0.1:9/hook' } },
      { urls: [url] },
    ]) {
      const refused = await call(other, 'POST', '/v1/monitors', body);
      expect(refused.status, JSON.stringify(body)).to.equal(400);
    }
    const tooMany = await call(other, 'POST', '/v1/monitors', { urls: Array.from({ length: 101 }, (_, k) => `${url}?k=${k}`), schedule: DAILY });
    expect(tooMany.status).to.equal(429);
    expect(tooMany.body).to.include({ code: 'quota_exceeded', limit: 'monitor_urls' });
    expect((await call(other, 'GET', '/v1/monitors')).body.monitors).to.deep.equal([]);

    const made: string[] = [];
    for (let k = 0; k < 5; k++) {
      const created = await call(other, 'POST', '/v1/monitors', { urls: [url], schedule: DAILY });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      made.push(created.body.monitor_id as string);
    }
    const sixth = await call(other, 'POST', '/v1/monitors', { urls: [url], schedule: DAILY });
    expect(sixth.status).to.equal(429);
    expect(sixth.body).to.include({ code: 'quota_exceeded', limit: 'monitors', allowed: 5 });
    const page = await call(other, 'GET', '/v1/monitors?limit=3');
    expect(page.body.monitors.map((monitor: { monitor_id: string }) => monitor.monitor_id)).to.deep.equal(made.slice().reverse().slice(0, 3));
    const next = await call(other, 'GET', `/v1/monitors?limit=3&cursor=${page.body.next_cursor}`);
    expect(next.body.monitors.map((monitor: { monitor_id: string }) => monitor.monitor_id)).to.deep.equal(made.slice().reverse().slice(3));
    expect((await call(other, 'DELETE', `/v1/monitors/${made[0]}`)).status).to.equal(204);
    expect((await call(other, 'POST', '/v1/monitors', { urls: [url], schedule: DAILY })).status).to.equal(201);
    // Another account's monitor reads as missing.
    expect((await call(account, 'GET', `/v1/monitors/${made[1]}`)).status).to.equal(404);
    const patched = await call(other, 'PATCH', `/v1/monitors/${made[1]}`, { name: 'renamed', schedule: { every: 6, unit: 'hour' } });
    expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
    expect(patched.body).to.include({ name: 'renamed' });
    expect(patched.body.schedule).to.deep.equal({ every: 6, unit: 'hour' });
  });

  it('records a check that would overlap a running one as skipped, never stacked', async () => {
    // The site answers slowly: the first check is still running when the second is asked for.
    const slow = await startFixtureServer((_req, res) => {
      setTimeout(() => res.end('<html><body><p>slow page</p></body></html>'), 4_000);
    });
    const created = await call(account, 'POST', '/v1/monitors', { urls: [site.url(products()[0] as number), `${slow.url}slow`], schedule: DAILY });
    const monitorId = created.body.monitor_id as string;
    try {
      const first = await call(account, 'POST', `/v1/monitors/${monitorId}/check`);
      await eventually(async () => (await call(account, 'GET', `/v1/monitors/${monitorId}/checks/${first.body.check_id}`)).body.status === 'running', 100, 100);
      const second = await checkNow(account, monitorId);
      expect(second).to.include({ status: 'skipped', failure_reason: 'overlap', pages_checked: 0, credits: 0 });
      const firstEnded = await waitForCheck(account, monitorId, first.body.check_id as string);
      expect(firstEnded).to.include({ status: 'completed', pages_checked: 2 });
      const third = await checkNow(account, monitorId);
      expect(third.status).to.equal('completed');
    } finally {
      await slow.close();
    }
  });

  it('MCP tools create, list and delete monitors and read a monitor’s changes', async () => {
    const client = new Client({ name: 'fetchplane-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${testStack().urls.api}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${account.key}` } } }));
    const tool = async (name: string, args: Record<string, unknown>): Promise<Record<string, any>> => { // eslint-disable-line @typescript-eslint/no-explicit-any
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      const [first] = result.content;
      expect(result.isError ?? false, JSON.stringify(result)).to.equal(false);
      return JSON.parse(first?.type === 'text' ? first.text : '{}') as Record<string, unknown>;
    };
    try {
      const id = products()[1] as number;
      const created = await tool('monitor_create', { name: 'via mcp', urls: [site.url(id)], schedule: DAILY, css_extractor: PRODUCT });
      const monitorId = created.monitor_id as string;
      expect((await tool('monitor_list', {})).monitors.map((monitor: { monitor_id: string }) => monitor.monitor_id)).to.include(monitorId);
      await checkNow(account, monitorId);
      site.edit(id, 'price');
      const edited = await checkNow(account, monitorId);
      const changes = await tool('monitor_changes', { monitor_id: monitorId });
      expect(changes.checks[0].check_id).to.equal(edited.check_id);
      expect(changes.checks[0].changes.map((change: { url: string; change_status: string }) => [change.url, change.change_status])).to.deep.equal([[site.url(id), 'changed']]);
      expect(Object.keys(changes.checks[0].changes[0].diff.fields)).to.deep.equal(['price']);
      expect(await tool('monitor_delete', { monitor_id: monitorId })).to.deep.equal({ monitor_id: monitorId, deleted: true });
      const gone = (await client.callTool({ name: 'monitor_changes', arguments: { monitor_id: monitorId } })) as CallToolResult;
      expect(gone.isError).to.equal(true);
    } finally {
      await client.close();
    }
  });

  it('keeps a check, its pages and bills for RESULTS_RETENTION_DAYS after it ended; a deleted monitor goes as long after', async () => {
    const { db, config } = await accountsHandle();
    const temporal = connectTemporal(config);
    try {
      const ids = products().slice(0, 2);
      const created = await call(account, 'POST', '/v1/monitors', { urls: ids.map((id) => site.url(id)), schedule: DAILY });
      const monitorId = created.body.monitor_id as string;
      const old = await checkNow(account, monitorId);
      site.edit(ids[0] as number, 'price');
      const young = await checkNow(account, monitorId);
      expect(young.changed).to.equal(1);
      const gone = await call(account, 'POST', '/v1/monitors', { urls: [site.url(ids[0] as number)], schedule: DAILY });
      expect((await call(account, 'DELETE', `/v1/monitors/${gone.body.monitor_id}`)).status).to.equal(204);
      // Both made long ago, as far as their records say.
      const then = new Date(Date.now() - (config.resultsRetentionDays + 1) * 86_400_000);
      const collections = db.db;
      await collections.collection('monitor_checks').updateOne({ _id: old.check_id }, { $set: { ended_at: then } });
      await collections.collection('monitor_pages').updateMany({ check_id: old.check_id }, { $set: { fetched_at: then } });
      await collections.collection('monitor_parts').updateMany({ check_id: old.check_id }, { $set: { at: then } });
      await collections.collection('monitors').updateOne({ _id: gone.body.monitor_id }, { $set: { updated_at: then } });
      await collections.collection('monitor_lists').updateMany({ monitor_id: gone.body.monitor_id }, { $set: { updated_at: then } });
      // The live monitor's lists are as old: only a deleted monitor's go.
      await collections.collection('monitor_lists').updateMany({ monitor_id: monitorId }, { $set: { updated_at: then } });
      await triggerScheduleNow(temporal.client, RETENTION_SCHEDULE_ID);
      const left = await call(account, 'GET', `/v1/monitors/${monitorId}/checks`);
      expect(left.body.checks.map((check: { check_id: string }) => check.check_id)).to.deep.equal([young.check_id]);
      expect(await collections.collection('monitor_pages').countDocuments({ check_id: old.check_id })).to.equal(0);
      expect(await collections.collection('monitor_parts').countDocuments({ check_id: old.check_id })).to.equal(0);
      expect(await collections.collection('monitor_pages').countDocuments({ check_id: young.check_id })).to.equal(1);
      expect(await collections.collection('monitors').countDocuments({ _id: gone.body.monitor_id })).to.equal(0);
      expect(await collections.collection('monitor_lists').countDocuments({ monitor_id: gone.body.monitor_id })).to.equal(0);
      expect(await collections.collection('monitor_lists').countDocuments({ monitor_id: monitorId })).to.equal(2);
      expect((await call(account, 'GET', `/v1/monitors/${monitorId}`)).body.urls).to.deep.equal(ids.map((id) => site.url(id)));
      expect((await call(account, 'GET', `/v1/monitors/${monitorId}/checks/${young.check_id}`)).body.changes).to.have.length(1);
    } finally {
      await temporal.close();
    }
  });

  it('learns at the baseline a banner no rule masks, so the next check finds the page the same', async () => {
    const deals = ['Garden chairs', 'Coffee mugs', 'Winter boots', 'Desk lamps', 'Paper maps', 'Silver rings', 'River kayaks'];
    let served = 0;
    let price = '$12.00';
    const banner = await startFixtureServer((_req, res) => {
      const deal = deals[served++ % deals.length] as string;
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(`<html><body><h1>Lamp</h1><p class="price">${price}</p><div class="promo"><p>Deal of the moment: ${deal} for less</p></div><p>A quiet lamp for a quiet desk, made of wood and brass.</p></body></html>`);
    });
    try {
      const created = await call(account, 'POST', '/v1/monitors', { urls: [`${banner.url}lamp`], schedule: DAILY, css_extractor: { price: '.price' } });
      const monitorId = created.body.monitor_id as string;
      const baseline = await checkNow(account, monitorId);
      expect(baseline).to.include({ status: 'completed', new: 1, credits: 1 });
      const next = await checkNow(account, monitorId);
      expect(next).to.include({ status: 'completed', same: 1, changed: 0 });
      price = '$15.00';
      const moved = await checkNow(account, monitorId);
      expect(moved).to.include({ changed: 1 });
      const detail = await call(account, 'GET', `/v1/monitors/${monitorId}/checks/${moved.check_id}`);
      expect(detail.body.changes[0].diff.fields).to.deep.equal({ price: { previous: '$12.00', current: '$15.00' } });
    } finally {
      await banner.close();
    }
  });
});
