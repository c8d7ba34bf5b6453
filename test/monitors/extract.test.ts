import { expect } from 'chai';
import { serveSites, type SitesServer } from '../fixtures/extract-sites/server';
import { watchedHomes, type GeneratedSite } from '../fixtures/extract-sites/sites';
import { startWebhookReceiver, type WebhookReceiver } from '../fixtures/webhook-receiver';
import { eventually, extractSitesAddress } from '../helpers/stack';
import { call, checkEvents, checkNow, monitorAccount, type MonitorAccount } from './helpers';
import type { Json } from '../webhooks/helpers';

const DAILY = { every: 1, unit: 'day' };
const usd = (value: number): string => `$${value.toLocaleString('en-US')}`;

describe('monitors: Extract’s fields and the main content compared', function () {
  this.timeout(300_000);
  let server: SitesServer;
  let site: GeneratedSite;
  let receiver: WebhookReceiver;
  let account: MonitorAccount;

  before(async () => {
    site = watchedHomes();
    server = await serveSites(extractSitesAddress(), [site]);
    receiver = await startWebhookReceiver();
    account = await monitorAccount();
  });
  after(async () => {
    await receiver?.close();
    await server?.close();
  });

  const pageUrl = (path: string): string => `http://${site.host}${path}`;
  /** Changes the page as the site would: `edit` rewrites its HTML. */
  const edit = (path: string, change: (html: string) => string): void => {
    const page = site.pages.get(path);
    if (!page) throw new Error(`no page ${path}`);
    const html = change(page.html);
    expect(html, 'the edit changed the page').to.not.equal(page.html);
    page.html = html;
  };
  const pageEvents = (events: Json[]): Json[] => events.filter((event) => event.event_type !== 'monitor.check.completed');

  it('compares a prepared domain’s fields (the first diff right even when the domain was prepared after the baseline), and only the main content with main_content', async () => {
    const path = site.details[0] as string;
    const price = site.pages.get(path)?.truth?.price as number;
    expect(price).to.be.a('number');
    // The domain is not prepared yet: the monitors are made all the same.
    const made = async (body: Record<string, unknown>): Promise<string> => {
      const created = await call(account, 'POST', '/v1/monitors', { urls: [pageUrl(path)], schedule: DAILY, webhook: { url: receiver.url('/extract'), signature: true }, ...body });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      return created.body.monitor_id as string;
    };
    const article = await made({ name: 'article', extract: 'auto', main_content: true });
    const whole = await made({ name: 'whole page', extract: { mode: 'auto' } });
    expect((await call(account, 'GET', `/v1/monitors/${article}`)).body).to.deep.include({ extract: { mode: 'auto' }, main_content: true });

    // Baselines on an unprepared domain: the page is fetched and kept (one credit each), no page event.
    for (const monitorId of [article, whole]) {
      const baseline = await checkNow(account, monitorId);
      expect(baseline).to.include({ status: 'completed', baseline: true, pages_checked: 1, new: 1, failed: 0, credits: 1 });
      expect((await checkEvents(receiver, account, baseline)).map((event) => event.event_type)).to.deep.equal(['monitor.check.completed']);
    }

    const submitted = await call(account, 'POST', '/v1/extract/prepared-domains', { domain: site.host, example_urls: [pageUrl(path)] });
    expect(submitted.status, JSON.stringify(submitted.body)).to.equal(202);
    let record: Json = {};
    await eventually(async () => {
      record = (await call(account, 'GET', `/v1/extract/prepared-domains/${site.host}`)).body;
      return record.status !== 'preparing';
    }, 600, 250);
    expect(record.status, JSON.stringify(record)).to.equal('ready');

    // The recipe now applies: the fields appear on both sides (the last version's read from its stored page), so nothing changed.
    for (const monitorId of [article, whole]) {
      const ready = await checkNow(account, monitorId);
      expect(ready).to.include({ status: 'completed', same: 1, changed: 0, failed: 0, credits: 1 });
      expect(pageEvents(await checkEvents(receiver, account, ready))).to.deep.equal([]);
    }

    // Outside the main content: the whole page's monitor sees it, the article's does not.
    edit(path, (html) => html.replace('© Example Realty', '© Example Realty Group, serving three counties'));
    const footerArticle = await checkNow(account, article);
    expect(footerArticle).to.include({ status: 'completed', same: 1, changed: 0 });
    expect(pageEvents(await checkEvents(receiver, account, footerArticle))).to.deep.equal([]);
    const footerWhole = await checkNow(account, whole);
    expect(footerWhole).to.include({ status: 'completed', changed: 1 });
    const footerEvents = pageEvents(await checkEvents(receiver, account, footerWhole));
    expect(footerEvents.map((event) => event.event_type)).to.deep.equal(['monitor.page.changed']);
    expect(footerEvents[0]?.diff.fields).to.deep.equal({});
    expect(footerEvents[0]?.diff.text).to.include('three counties');

    // An extracted field: exactly one monitor.page.changed with the field's diff.
    const raised = price + 12_345;
    edit(path, (html) => html.replace(`"price":${price}`, `"price":${raised}`).replace(`<span class="price-value">${usd(price)}</span>`, `<span class="price-value">${usd(raised)}</span>`));
    const priced = await checkNow(account, article);
    expect(priced).to.include({ status: 'completed', changed: 1, credits: 1 });
    const events = pageEvents(await checkEvents(receiver, account, priced));
    expect(events.map((event) => [event.event_type, event.url])).to.deep.equal([['monitor.page.changed', pageUrl(path)]]);
    expect(events[0]?.diff.fields).to.deep.equal({ price: { previous: price, current: raised } });
    expect(events[0]?.diff.text).to.include(usd(raised));
  });

  it('refuses bad `extract` bodies with a 4xx naming the field, and creates nothing', async () => {
    const other = await monitorAccount();
    const url = pageUrl(site.details[1] as string);
    const cases: Array<[unknown, string]> = [
      ['everything', 'extract.mode'],
      [{ mode: 'fancy' }, 'extract.mode'],
      [{ price: 'the price' }, 'extract.price'],
      [{ fields: [] }, 'extract.fields'],
      [{ fields: 'price' }, 'extract.fields'],
      [{ fields: ['price', 'a b'] }, 'extract.fields[1]'],
      [{ fields: ['price', 7] }, 'extract.fields[1]'],
      [42, 'extract'],
    ];
    for (const [extract, parameter] of cases) {
      const refused = await call(other, 'POST', '/v1/monitors', { urls: [url], schedule: DAILY, extract });
      expect([refused.status, refused.body.code], JSON.stringify(extract)).to.deep.equal([400, 'invalid_argument']);
      expect(refused.body.parameter ?? refused.body.detail, JSON.stringify(refused.body)).to.include(parameter);
    }
    const both = await call(other, 'POST', '/v1/monitors', { urls: [url], schedule: DAILY, extract: 'auto', css_extractor: { price: '.price-value' } });
    expect([both.status, both.body.parameter]).to.deep.equal([400, 'extract']);
    expect((await call(other, 'GET', '/v1/monitors')).body.monitors).to.deep.equal([]);
    // A monitor that exists is left as it was by a refused change.
    const kept = await call(other, 'POST', '/v1/monitors', { urls: [url], schedule: DAILY, extract: 'auto' });
    expect(kept.status, JSON.stringify(kept.body)).to.equal(201);
    const patched = await call(other, 'PATCH', `/v1/monitors/${kept.body.monitor_id}`, { extract: { fields: [''] } });
    expect([patched.status, patched.body.parameter]).to.deep.equal([400, 'extract.fields[0]']);
    expect((await call(other, 'GET', `/v1/monitors/${kept.body.monitor_id}`)).body.extract).to.deep.equal({ mode: 'auto' });
  });
});
