import { expect } from 'chai';
import { creditsUsed } from '../batch/helpers';
import { accountsHandle } from '../crawls/helpers';
import { startChangeSite, type ChangeSite } from '../fixtures/changes/site';
import { startWebhookReceiver, type WebhookReceiver } from '../fixtures/webhook-receiver';
import { eventually, testStack } from '../helpers/stack';
import { call, checkEvents, checkNow, monitorAccount, waitForCheck, type MonitorAccount } from './helpers';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const PAGES = 24;

describe('monitors: a check survives the worker and Temporal dying in its middle', function () {
  this.timeout(300_000);
  let site: ChangeSite;
  let receiver: WebhookReceiver;
  let account: MonitorAccount;

  before(async () => {
    site = await startChangeSite({ pages: PAGES, seed: 23, delayMs: 400 });
    receiver = await startWebhookReceiver();
    account = await monitorAccount();
  });
  after(async () => {
    await receiver.close();
    await site.close();
  });

  it('ends with exactly one event per change, each page billed once', async () => {
    const created = await call(account, 'POST', '/v1/monitors', { name: 'durable', urls: site.ids().map((id) => site.url(id)), schedule: { every: 1, unit: 'day' }, webhook: { url: receiver.url('/durable'), signature: true } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const monitorId = created.body.monitor_id as string;
    const baseline = await checkNow(account, monitorId);
    expect(baseline).to.include({ status: 'completed', pages_checked: PAGES, new: PAGES, credits: PAGES });

    const edited = site.ids().filter((_, index) => index % 5 === 0);
    for (const id of edited) site.edit(id, 'paragraph added');
    const started = await call(account, 'POST', `/v1/monitors/${monitorId}/check`);
    const checkId = started.body.check_id as string;
    const { db } = (await accountsHandle()).db;
    const answered = (): number => site.ids().reduce((sum, id) => sum + site.hits(new URL(site.url(id)).pathname), 0);
    const before = answered();
    // Killed once the site answered some pages of the check and before its pages were stored (they are, by the part).
    await eventually(async () => answered() - before >= 4, 400, 25);
    expect(await db.collection('monitor_pages').countDocuments({ check_id: checkId })).to.equal(0);
    await testStack().component('worker').kill();
    await testStack().component('temporal').stop();
    await sleep(2_000);
    await testStack().startOne('temporal');
    await testStack().startOne('worker');

    const check = await waitForCheck(account, monitorId, checkId);
    expect(check).to.include({ status: 'completed', pages_checked: PAGES, changed: edited.length, same: PAGES - edited.length, new: 0, removed: 0, credits: PAGES });
    const events = await checkEvents(receiver, account, check);
    const changed = events.filter((event) => event.event_type === 'monitor.page.changed');
    expect(changed.map((event) => event.url).sort(), 'one event per changed page').to.deep.equal(edited.map((id) => site.url(id)).sort());
    expect(events.filter((event) => event.event_type === 'monitor.check.completed')).to.have.length(1);
    // Deliveries may repeat (at least once), always with the same event id and bytes.
    const byId = new Map<string, string>();
    for (const delivery of receiver.deliveries) {
      const id = String(delivery.headers['x-service-event-id']);
      const seen = byId.get(id);
      if (seen !== undefined) expect(delivery.body.toString('utf8')).to.equal(seen);
      byId.set(id, delivery.body.toString('utf8'));
    }
    expect(await creditsUsed(account.accountId), 'each page of each check billed once').to.equal(2 * PAGES);
  });

  it('ends with exactly one event per change when the worker dies as the check ends', async () => {
    const created = await call(account, 'POST', '/v1/monitors', { name: 'ending', urls: site.ids().slice(0, 6).map((id) => site.url(id)), schedule: { every: 1, unit: 'day' }, webhook: { url: receiver.url('/ending'), signature: true } });
    const monitorId = created.body.monitor_id as string;
    await checkNow(account, monitorId);
    const edited = site.ids().slice(0, 2);
    for (const id of edited) site.edit(id, 'paragraph added');
    const started = await call(account, 'POST', `/v1/monitors/${monitorId}/check`);
    const checkId = started.body.check_id as string;
    const { db } = (await accountsHandle()).db;
    // The pages are stored: the check is ending (its end record, events or deliveries) when the worker dies.
    await eventually(async () => (await db.collection('monitor_parts').countDocuments({ check_id: checkId })) > 0, 400, 25);
    await testStack().component('worker').kill();
    await sleep(1_000);
    await testStack().startOne('worker');
    const check = await waitForCheck(account, monitorId, checkId);
    expect(check).to.include({ status: 'completed', changed: edited.length, same: 6 - edited.length });
    const events = await checkEvents(receiver, account, check);
    expect(events.filter((event) => event.event_type === 'monitor.page.changed').map((event) => event.url).sort()).to.deep.equal(edited.map((id) => site.url(id)).sort());
    expect(events.filter((event) => event.event_type === 'monitor.check.completed')).to.have.length(1);
  });
});
