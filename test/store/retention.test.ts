import { expect } from 'chai';
import { connectTemporal, type TemporalHandle } from '../../base/temporal';
import { CRAWL_DATA_COLLECTIONS, RETENTION_SCHEDULE_ID, RETENTION_WORKFLOW } from '../../core/retention';
import { startCrawlSite, type CrawlSite } from '../fixtures/crawl-site/server';
import { accountsHandle, CrawlClient, crawlAccount } from '../crawls/helpers';
import { eventually } from '../helpers/stack';
import { triggerScheduleNow } from '../helpers/schedules';
import { batchCollections } from '../../core/batch/store';
import { allResults, batchAccount, batchRequest, startTargetSite, urls, waitForRun } from '../batch/helpers';

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
    // Kept pages: blobs the crawl owns.
    counts.blob_chunks = await db.collection('blob_chunks').countDocuments({ kind: 'crawl', owner: crawlId });
    return counts;
  }

  /** Runs the schedule's action now and waits for that sweep to finish. */
  async function sweepNow(): Promise<Record<string, number>> {
    return (await triggerScheduleNow<{ removed: Record<string, number> }>(temporal.client, RETENTION_SCHEDULE_ID)).removed;
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
    expect((await crawlData(old)).blob_chunks).to.be.greaterThan(0);

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
    const refreshTokens = db.collection<{ _id: string; expires_at: Date }>('oauth_refresh_tokens');
    await refreshTokens.insertMany([
      { _id: `expired-${process.pid}`, expires_at: new Date(Date.now() - 1000) },
      { _id: `current-${process.pid}`, expires_at: new Date(Date.now() + DAY_MS) },
    ]);

    // Reads during the sweep answer the crawl or 404, never a 5xx.
    let reading = true;
    const statuses = new Set<number>();
    const reader = (async () => {
      // At most about 100 reads a second: within the account's request budget, which is not what this checks.
      while (reading) {
        statuses.add((await first.read(old)).status);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
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
    expect(await refreshTokens.countDocuments({ _id: { $in: [`expired-${process.pid}`] } }), 'expired refresh token').to.equal(0);
    expect(await refreshTokens.countDocuments({ _id: { $in: [`current-${process.pid}`] } })).to.equal(1);
  });

  it('removes Batch runs that ended before the limit and deleted jobs, keeping a rerun’s source and young runs', async () => {
    const { db } = (await accountsHandle()).db;
    const store = batchCollections(db);
    const target = await startTargetSite();
    try {
      const account = await batchAccount();
      const submit = async (): Promise<string> => {
        const created = await batchRequest(account.key, 'POST', '/v1/jobs', { tasks: [...urls(target, 'ok', 3), ...urls(target, 'missing', 1)] });
        expect(created.status, JSON.stringify(created.body)).to.equal(201);
        const job = created.body.job_id as string;
        await waitForRun(account.key, job);
        return job;
      };
      const [aged, young, deleted, rerunOfAged] = [await submit(), await submit(), await submit(), await submit()];
      // `rerunOfAged`: its first run is aged, but a young rerun of its failed task inherits the three bodies.
      const rerun = await batchRequest(account.key, 'POST', `/v1/jobs/${rerunOfAged}/rerun?status=failed`);
      expect(rerun.status, JSON.stringify(rerun.body)).to.equal(202);
      await waitForRun(account.key, rerunOfAged);
      const exported = await batchRequest(account.key, 'POST', `/v1/jobs/${young}/runs/${(await store.jobs.findOne({ _id: young }))!.latest_run_id}/exports`);
      expect(exported.status).to.equal(202);
      await eventually(async () => (await store.exports.findOne({ _id: exported.body.export_id as string }))?.status === 'completed');
      expect((await batchRequest(account.key, 'DELETE', `/v1/jobs/${deleted}`)).status).to.equal(204);

      const runsOf = async (job: string) => (await store.runs.find({ job_id: job }).toArray()).map((run) => run._id);
      const dataOf = async (runIds: string[]): Promise<number> => {
        let total = 0;
        total += await db.collection('blob_chunks').countDocuments({ kind: 'batch_run', owner: { $in: runIds } });
        for (const name of ['batch_results', 'batch_charges']) {
          for await (const doc of db.collection<{ _id: string; run_id?: string }>(name).find({}, { projection: { _id: 1, run_id: 1 } })) {
            if (runIds.some((id) => doc.run_id === id || doc._id.startsWith(`${id}|`))) total++;
          }
        }
        return total;
      };
      const [agedRuns, youngRuns, deletedRuns, sourceRuns] = [await runsOf(aged), await runsOf(young), await runsOf(deleted), await runsOf(rerunOfAged)];
      const youngBefore = await dataOf(youngRuns);
      const sourceBefore = await dataOf(sourceRuns);
      expect(await dataOf(agedRuns)).to.be.greaterThan(0);
      expect(sourceRuns).to.have.length(2);
      const sourceRun = (await store.jobs.findOne({ _id: rerunOfAged }))!.latest_run_id === sourceRuns[0] ? sourceRuns[1]! : sourceRuns[0]!;

      // The export's file is a blob of the export.
      expect(await db.collection('blob_chunks').countDocuments({ kind: 'batch_export', owner: exported.body.export_id as string })).to.be.greaterThan(0);
      const longAgo = new Date(Date.now() - 31 * DAY_MS);
      await store.runs.updateMany({ _id: { $in: [...agedRuns, sourceRun] } }, { $set: { ended_at: longAgo } });
      await store.exports.updateOne({ _id: exported.body.export_id as string }, { $set: { expires_at: new Date(Date.now() - 1000) } });
      const removed = await sweepNow();

      expect(await runsOf(aged)).to.deep.equal([]);
      expect(await dataOf(agedRuns), 'the aged run’s results, bodies and bill').to.equal(0);
      const read = await batchRequest(account.key, 'GET', `/v1/jobs/${aged}/results`);
      expect(read.status).to.equal(404);
      expect(await runsOf(deleted)).to.deep.equal([]);
      expect(await dataOf(deletedRuns), 'the deleted job’s results and bodies').to.equal(0);
      expect(await store.jobs.countDocuments({ _id: deleted })).to.equal(0);
      expect(await store.slices.countDocuments({ job_id: deleted })).to.equal(0);
      expect(await runsOf(young)).to.deep.equal(youngRuns);
      expect(await dataOf(youngRuns)).to.equal(youngBefore);
      expect(await runsOf(rerunOfAged), 'a rerun’s source stays').to.have.members(sourceRuns);
      expect(await dataOf(sourceRuns)).to.equal(sourceBefore);
      const inherited = await allResults(account.key, `/v1/jobs/${rerunOfAged}/results`, 'successful');
      expect(await (await fetch(inherited[0]!.result_url as string)).text()).to.contain('Page /ok/0');
      expect(await store.exports.countDocuments({ _id: exported.body.export_id as string })).to.equal(0);
      expect(await db.collection('blob_chunks').countDocuments({ kind: 'batch_export', owner: exported.body.export_id as string }), 'the expired export’s file').to.equal(0);
      expect(removed.batch_runs).to.be.at.least(2);
    } finally {
      await target.close();
    }
  });
});
