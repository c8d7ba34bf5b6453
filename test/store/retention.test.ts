import { expect } from 'chai';
import { connectTemporal, type TemporalHandle } from '../../core/temporal';
import { CRAWL_DATA_COLLECTIONS, RETENTION_SCHEDULE_ID, RETENTION_WORKFLOW } from '../../core/retention';
import { startCrawlSite, type CrawlSite } from '../fixtures/crawl-site/server';
import { accountsHandle, CrawlClient, crawlAccount } from '../crawls/helpers';
import { eventually } from '../helpers/stack';

const DAY_MS = 24 * 60 * 60 * 1000;

describe('retention: the scheduled sweep of expired data', function () {
  this.timeout(180_000);
  let site: CrawlSite;
  let temporal: TemporalHandle;

  before(async () => {
    site = await startCrawlSite({ pages: 30, fanout: 3, name: 'retention' });
    temporal = connectTemporal((await accountsHandle()).config);
  });
  after(async () => {
    await temporal.close();
    await site.close();
  });

  /** Documents of a crawl in every collection that holds its data. */
  async function crawlData(crawlId: string): Promise<Record<string, number>> {
    const { db } = (await accountsHandle()).db;
    const counts: Record<string, number> = {};
    for (const name of ['crawls', 'crawl_ends', ...CRAWL_DATA_COLLECTIONS]) {
      const filter = name === 'crawls' || name === 'crawl_ends' ? { _id: crawlId } : { crawl_id: crawlId };
      counts[name] = await db.collection(name).countDocuments(filter as never);
    }
    return counts;
  }

  /** Runs the schedule's action now and waits for that sweep to finish. */
  async function sweepNow(): Promise<Record<string, number>> {
    const schedule = temporal.client.schedule.getHandle(RETENTION_SCHEDULE_ID);
    const before = (await schedule.describe()).info.recentActions.length;
    await schedule.trigger();
    let workflowId = '';
    await eventually(async () => {
      const actions = (await schedule.describe()).info.recentActions;
      if (actions.length <= before) return false;
      workflowId = actions[actions.length - 1]!.action.workflow.workflowId;
      return true;
    });
    const report = (await temporal.client.workflow.getHandle(workflowId).result()) as { removed: Record<string, number> };
    return report.removed;
  }

  it('is registered by the worker as a Schedule visible in Temporal', async () => {
    const described = await temporal.client.schedule.getHandle(RETENTION_SCHEDULE_ID).describe();
    expect(described.action).to.include({ type: 'startWorkflow', workflowType: RETENTION_WORKFLOW });
    expect(described.spec.intervals?.[0]?.every).to.be.a('number');
  });

  it('removes exactly what is older than the limit, across accounts, and an expired crawl reads as missing', async () => {
    const { db } = (await accountsHandle()).db;
    const [first, second] = [new CrawlClient(await crawlAccount()), new CrawlClient(await crawlAccount())];
    const old = await first.started({ url: site.url, max_pages: 10, output_format: 'html' });
    const young = await second.started({ url: site.url, max_pages: 10, output_format: 'html' });
    const oldToo = await second.started({ url: site.url, max_pages: 5 });
    for (const [client, id] of [[first, old], [second, young], [second, oldToo]] as const) await client.finish(id);
    const youngBefore = await crawlData(young);
    expect((await crawlData(old)).crawl_contents).to.be.greaterThan(0);

    // Two crawls ended 31 days ago, one a day inside the limit; other records on both sides of theirs.
    const ends = db.collection<{ _id: string; finished_at: Date }>('crawl_ends');
    await ends.updateMany({ _id: { $in: [old, oldToo] } }, { $set: { finished_at: new Date(Date.now() - 31 * DAY_MS) } });
    await ends.updateOne({ _id: young }, { $set: { finished_at: new Date(Date.now() - 29 * DAY_MS) } });
    const keys = db.collection<{ _id: string; created_at: Date }>('idempotency_keys');
    await keys.insertMany([
      { _id: `retention-old-${process.pid}`, created_at: new Date(Date.now() - 25 * 60 * 60 * 1000) },
      { _id: `retention-young-${process.pid}`, created_at: new Date(Date.now() - 23 * 60 * 60 * 1000) },
    ]);
    const rungs = db.collection<{ _id: string; expires_at: Date }>('domain_rungs');
    await rungs.insertMany([
      { _id: `expired-${process.pid}.test`, expires_at: new Date(Date.now() - 1000) },
      { _id: `current-${process.pid}.test`, expires_at: new Date(Date.now() + DAY_MS) },
    ]);

    // Reads during the sweep answer the crawl or 404, never a 5xx.
    let reading = true;
    const statuses = new Set<number>();
    const reader = (async () => {
      while (reading) statuses.add((await first.read(old)).status);
    })();
    const removed = await sweepNow();
    reading = false;
    await reader;

    expect([...statuses].every((status) => status === 200 || status === 404), [...statuses].join(',')).to.equal(true);
    expect(removed.crawls).to.equal(2);
    for (const id of [old, oldToo]) expect(Object.values(await crawlData(id)).every((count) => count === 0), id).to.equal(true);
    expect(await crawlData(young)).to.deep.equal(youngBefore);
    const missing = await first.read(old);
    expect([missing.status, missing.body.code]).to.deep.equal([404, 'crawl_not_found']);
    expect((await second.read(young)).status).to.equal(200);
    expect(await keys.countDocuments({ _id: { $in: [`retention-old-${process.pid}`] } })).to.equal(0);
    expect(await keys.countDocuments({ _id: { $in: [`retention-young-${process.pid}`] } })).to.equal(1);
    expect(await rungs.countDocuments({ _id: { $in: [`expired-${process.pid}.test`] } })).to.equal(0);
    expect(await rungs.countDocuments({ _id: { $in: [`current-${process.pid}.test`] } })).to.equal(1);
  });
});
