/**
 * Starts that reconcile: a start cut short (the API killed while it waits on a Temporal that is down)
 * is taken over by the retry with the same Idempotency-Key and leads to the same record, which runs
 * to its end; nothing stays held. The reconciler (run here through its Temporal Schedule) settles what
 * such a start leaves when no retry comes: records older than its grace are made to look so.
 */
import { expect } from 'chai';
import { newRunRecord } from '../../core/batch/runs/records';
import type { JobDoc } from '../../core/batch/store';
import { newCrawlDocument } from '../../core/crawls/store';
import type { ReconcileReport } from '../../core/jobs/reconcile';
import { startId, type JobStartDoc } from '../../core/jobs/start';
import { RECONCILE_SCHEDULE_ID, RECONCILE_WORKFLOW } from '../../core/reconcile';
import { connectTemporal, type TemporalHandle } from '../../base/temporal';
import { eventually } from '../helpers/stack';
import { triggerScheduleNow } from '../helpers/schedules';
import { startCrawlSite, type CrawlSite } from '../fixtures/crawl-site/server';
import { testStack } from '../helpers/stack';
import { batchRequest } from '../webhooks/helpers';
import { accountsHandle, batchAccount, startTargetSite, urls, waitForRun } from '../batch/helpers';
import { CrawlClient, crawlAccount, sleep, type Json } from '../crawls/helpers';
import type { FixtureServer } from '../helpers/fixtures';

const db = async () => (await accountsHandle()).db.db;
/** A stored document, read or written as it is. */
type Doc = { _id: string; [field: string]: unknown };

/** Polls `check` (at most `attempts` times, 250 ms apart) until it answers something. */
async function waitFor<T>(what: string, check: () => Promise<T | undefined>, attempts = 240): Promise<T> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    const found = await check().catch(() => undefined);
    if (found !== undefined) return found;
    await sleep(250);
  }
  throw new Error(`${what}: not seen after ${attempts} polls`);
}

/** Answers once the account holds no active-job slot (a slot left behind fails the wait). */
const slotsOf = async (accountId: string): Promise<number> => (await db()).collection('active_jobs').countDocuments({ account_id: accountId });

/**
 * Kills Temporal, sends `send` (which waits on Temporal inside the API), kills the API once `written`
 * sees the start's first record, then brings Temporal and the API back.
 */
async function cutShort(send: () => Promise<unknown>, written: () => Promise<boolean>): Promise<void> {
  const stack = testStack();
  await stack.component('temporal').kill();
  try {
    // The API dies under the request: its answer is a broken connection, never a 2xx.
    const request = send().then(
      (answer) => answer,
      () => 'connection lost',
    );
    await waitFor('the start writing its record while Temporal is down', async () => ((await written()) ? true : undefined), 120);
    await stack.component('api').kill();
    const answer = await request;
    expect(answer === 'connection lost' || (answer as { status: number }).status >= 500, `no 2xx for a start cut short: ${JSON.stringify(answer)}`).to.equal(true);
  } finally {
    await stack.startOne('temporal');
    await stack.startOne('api');
  }
}

/** A 409 saying the key's request is still in progress: its owner may have died moments ago, retry shortly. */
const inFlight = (answer: { status: number; body: Json }): boolean => answer.status === 409 && /still/.test(String(answer.body.detail));

/**
 * Retries as a client would (the stack coming back, the key's dead owner not yet known as dead)
 * until another answer comes, at most `attempts` times.
 */
async function retried(send: () => Promise<{ status: number; body: Json }>, attempts = 120): Promise<{ status: number; body: Json }> {
  let last: { status: number; body: Json } | undefined;
  for (let attempt = 0; attempt < attempts; attempt++) {
    last = await send().catch(() => undefined);
    if (last && last.status < 500 && !inFlight(last)) return last;
    await sleep(500);
  }
  throw new Error(`retry never answered: ${JSON.stringify(last)}`);
}

describe('jobs: starts that reconcile', function () {
  this.timeout(600_000);
  let crawlSite: CrawlSite;
  let batchSite: FixtureServer;

  before(async () => {
    crawlSite = await startCrawlSite({ pages: 12, fanout: 2, name: 'starts' });
    batchSite = await startTargetSite();
  });
  after(async () => {
    await crawlSite.close();
    await batchSite.close();
  });

  it('a crawl start cut short is taken over by its retry: same crawl, one record, it ends, no slot held', async () => {
    const account = await crawlAccount();
    const client = new CrawlClient(account);
    const body = { url: crawlSite.url, max_items: 1000, max_pages: 1000 };
    const headers = { 'Idempotency-Key': 'crawl-cut-short' };
    const crawls = (await db()).collection('crawls');
    await cutShort(
      () => client.start(body, headers),
      async () => (await crawls.countDocuments({ account_id: account.accountId })) > 0,
    );
    const first = await crawls.findOne({ account_id: account.accountId });

    const answer = await retried(() => client.start(body, headers));
    expect(answer.status, JSON.stringify(answer.body)).to.equal(202);
    expect(answer.body.crawl_id).to.equal(first?._id);
    const again = await client.start(body, headers);
    expect(again.body.crawl_id, 'a replay answers the same crawl').to.equal(first?._id);
    expect(await crawls.countDocuments({ account_id: account.accountId }), 'one crawl for one key').to.equal(1);

    const { crawl } = await client.finish(answer.body.crawl_id as string);
    expect(crawl.status).to.equal('completed');
    expect(crawl.coverage.pages_fetched).to.be.greaterThan(0);
    expect(await slotsOf(account.accountId), 'no active-job slot left held').to.equal(0);
  });

  it('a Batch job start cut short is taken over by its retry: same job, one run, it ends, no slot held', async () => {
    const account = await batchAccount();
    const body = { tasks: urls(batchSite, 'ok', 5) };
    const headers = { 'Idempotency-Key': 'job-cut-short' };
    const store = await db();
    await cutShort(
      () => batchRequest(account.key, 'POST', '/v1/jobs', body, headers),
      async () => (await store.collection<Doc>('batch_runs').countDocuments({ account_id: account.accountId })) > 0,
    );
    const firstRun = await store.collection<Doc>('batch_runs').findOne({ account_id: account.accountId });

    const answer = await retried(() => batchRequest(account.key, 'POST', '/v1/jobs', body, headers));
    expect(answer.status, JSON.stringify(answer.body)).to.be.oneOf([200, 201]);
    const jobId = answer.body.job_id as string;
    expect(jobId).to.equal(firstRun?.job_id);
    const replay = await batchRequest(account.key, 'POST', '/v1/jobs', body, headers);
    expect(replay.body.job_id, 'a replay answers the same job').to.equal(jobId);
    expect(await store.collection<Doc>('batch_jobs').countDocuments({ account_id: account.accountId }), 'one job for one key').to.equal(1);
    expect(await store.collection<Doc>('batch_runs').countDocuments({ account_id: account.accountId }), 'one run').to.equal(1);

    const run = await waitForRun(account.key, jobId);
    expect(run.status).to.equal('completed');
    expect(run.run_id).to.equal(firstRun?._id);
    expect(await slotsOf(account.accountId), 'no active-job slot left held').to.equal(0);
  });

  it('a Batch rerun cut short is taken over by its retry: same run, it ends, no slot held', async () => {
    const account = await batchAccount();
    const store = await db();
    const created = await batchRequest(account.key, 'POST', '/v1/jobs', { tasks: [...urls(batchSite, 'ok', 3), ...urls(batchSite, 'missing', 2)] });
    const jobId = created.body.job_id as string;
    const first = await waitForRun(account.key, jobId);
    const path = `/v1/jobs/${jobId}/rerun?status=failed`;
    const headers = { 'Idempotency-Key': 'rerun-cut-short' };
    await cutShort(
      () => batchRequest(account.key, 'POST', path, undefined, headers),
      async () => (await store.collection<Doc>('batch_runs').countDocuments({ job_id: jobId })) > 1,
    );
    const cut = await store.collection<Doc>('batch_runs').findOne({ job_id: jobId, _id: { $ne: first.run_id as string } });

    const answer = await retried(() => batchRequest(account.key, 'POST', path, undefined, headers));
    expect(answer.status, JSON.stringify(answer.body)).to.equal(202);
    expect(answer.body.latest_run.run_id, 'the same run').to.equal(cut?._id);
    expect(await store.collection<Doc>('batch_runs').countDocuments({ job_id: jobId }), 'one rerun').to.equal(2);
    const second = await waitForRun(account.key, jobId);
    expect([second.run_id, second.run_sequence, second.status]).to.deep.equal([cut?._id, 2, 'completed']);
    expect(await slotsOf(account.accountId), 'no active-job slot left held').to.equal(0);
  });

  it('a start that cannot reach Temporal answers an error and holds nothing; its retry starts one crawl', async () => {
    const account = await crawlAccount();
    const client = new CrawlClient(account);
    const body = { url: crawlSite.url, max_pages: 3 };
    const headers = { 'Idempotency-Key': 'crawl-temporal-down' };
    const store = await db();
    const stack = testStack();
    await stack.component('temporal').kill();
    let refused: { status: number; body: Json };
    try {
      refused = await client.start(body, headers);
    } finally {
      await stack.startOne('temporal');
    }
    expect(refused.status, JSON.stringify(refused.body)).to.be.at.least(500);
    expect(await store.collection<Doc>('crawls').countDocuments({ account_id: account.accountId }), 'no crawl record').to.equal(0);
    expect(await slotsOf(account.accountId), 'no slot').to.equal(0);
    expect(await store.collection<Doc>('job_starts').countDocuments({ account_id: account.accountId }), 'no start left').to.equal(0);
    expect(await store.collection<Doc>('idempotency_keys').countDocuments({ _id: { $regex: `^crawl\\|${account.accountId}\\|` } }), 'the key is free').to.equal(0);

    const answer = await retried(() => client.start(body, headers));
    expect(answer.status, JSON.stringify(answer.body)).to.equal(202);
    expect((await client.finish(answer.body.crawl_id as string)).crawl.status).to.equal('completed');
    expect(await store.collection<Doc>('crawls').countDocuments({ account_id: account.accountId })).to.equal(1);
    expect(await slotsOf(account.accountId)).to.equal(0);
  });

  describe('the reconciler', () => {
    let temporal: TemporalHandle;
    const LONG_AGO = () => new Date(Date.now() - 10 * 60 * 1000);

    before(async () => {
      temporal = connectTemporal((await accountsHandle()).config);
    });
    after(() => temporal.close());

    /** Runs the schedule's action now and answers that pass's report. */
    async function reconcileNow(): Promise<ReconcileReport> {
      return triggerScheduleNow<ReconcileReport>(temporal.client, RECONCILE_SCHEDULE_ID);
    }

    const startDoc = (kind: JobStartDoc['kind'], recordId: string, accountId: string, workflowId: string, claimId: string | null = null): JobStartDoc => ({
      _id: startId(kind, recordId),
      kind,
      record_id: recordId,
      account_id: accountId,
      workflow_id: workflowId,
      claim_id: claimId,
      attempt: null,
      created_at: LONG_AGO(),
    });

    it('is registered by the worker as a Schedule', async () => {
      const described = await temporal.client.schedule.getHandle(RECONCILE_SCHEDULE_ID).describe();
      expect(described.action).to.include({ type: 'startWorkflow', workflowType: RECONCILE_WORKFLOW });
    });

    it('gives back a start cut short whose client never heard back: record gone, slot returned, key dropped', async () => {
      const store = await db();
      const account = await crawlAccount();
      // A keyed crawl start that died after writing its record and slot, its request's owner long dead.
      const crawlId = `c_cutshort${Date.now().toString(36)}`;
      const claimId = `crawl|${account.accountId}|reconcile-${crawlId}`;
      await store.collection<Doc>('crawls').insertOne(newCrawlDocument({ _id: crawlId, account_id: account.accountId, key_id: account.keyId, url: crawlSite.url, domain: 'fixture.test', max_items: 10, max_pages: 10, include_patterns: [], exclude_patterns: [] }, LONG_AGO()) as never);
      await store.collection<Doc>('active_jobs').insertOne({ _id: crawlId, slot: `${account.accountId}:0`, account_id: account.accountId, kind: 'crawl', created_at: LONG_AGO() } as never);
      await store.collection<Doc>('idempotency_keys').insertOne({ _id: claimId, body: 'x', state: 'pending', result_id: null, reserved_id: crawlId, owner: 'dead', created_at: LONG_AGO(), alive_at: LONG_AGO() } as never);
      await store.collection<Doc>('job_starts').insertOne(startDoc('crawl', crawlId, account.accountId, `crawl-${crawlId}`, claimId) as never);

      // A rerun of a real job cut short the same way, without a key.
      const batch = await batchAccount();
      const created = await batchRequest(batch.key, 'POST', '/v1/jobs', { tasks: urls(batchSite, 'ok', 2) });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const jobId = created.body.job_id as string;
      expect((await waitForRun(batch.key, jobId)).status).to.equal('completed');
      const job = (await store.collection<Doc>('batch_jobs').findOne({ _id: jobId })) as unknown as JobDoc;
      const orphanRun = newRunRecord(job, batch.keyId, `run_cutshort${Date.now().toString(36)}`, 'manual', undefined, LONG_AGO());
      await store.collection<Doc>('batch_runs').insertOne(orphanRun as never);
      await store.collection<Doc>('active_jobs').insertOne({ _id: orphanRun._id, slot: `${batch.accountId}:0`, account_id: batch.accountId, kind: 'batch', created_at: LONG_AGO() } as never);
      await store.collection<Doc>('job_starts').insertOne(startDoc('batch', orphanRun._id, batch.accountId, `run-${orphanRun._id}`) as never);

      const report = await reconcileNow();
      expect(report.gaveBack).to.be.at.least(2);
      expect(await store.collection<Doc>('crawls').countDocuments({ _id: crawlId }), 'the crawl nobody was told of').to.equal(0);
      expect(await store.collection<Doc>('idempotency_keys').countDocuments({ _id: claimId }), 'the key is free for a retry').to.equal(0);
      expect(await store.collection<Doc>('batch_runs').countDocuments({ _id: orphanRun._id }), 'the rerun nobody was told of').to.equal(0);
      expect(await store.collection<Doc>('batch_jobs').countDocuments({ _id: jobId }), 'the job itself stays').to.equal(1);
      expect(await store.collection<Doc>('job_starts').countDocuments({ record_id: { $in: [crawlId, orphanRun._id] } })).to.equal(0);
      expect(await slotsOf(account.accountId)).to.equal(0);
      expect(await slotsOf(batch.accountId)).to.equal(0);
      const read = await new CrawlClient(account).read(crawlId);
      expect(read.status).to.equal(404);
    });

    it('runs when the API starts: a start cut short while it was down is given back without waiting for the Schedule', async () => {
      const store = await db();
      const account = await crawlAccount();
      const crawlId = `c_apistart${Date.now().toString(36)}`;
      await store.collection<Doc>('crawls').insertOne(newCrawlDocument({ _id: crawlId, account_id: account.accountId, key_id: account.keyId, url: crawlSite.url, domain: 'fixture.test', max_items: 10, max_pages: 10, include_patterns: [], exclude_patterns: [] }, LONG_AGO()) as never);
      await store.collection<Doc>('active_jobs').insertOne({ _id: crawlId, slot: `${account.accountId}:0`, account_id: account.accountId, kind: 'crawl', created_at: LONG_AGO() } as never);
      await store.collection<Doc>('job_starts').insertOne(startDoc('crawl', crawlId, account.accountId, `crawl-${crawlId}`) as never);
      await testStack().component('api').kill();
      await testStack().startOne('api');
      await eventually(async () => (await store.collection<Doc>('job_starts').countDocuments({ record_id: crawlId })) === 0, 120, 250);
      expect(await store.collection<Doc>('crawls').countDocuments({ _id: crawlId })).to.equal(0);
      expect(await slotsOf(account.accountId)).to.equal(0);
    });

    it('starts again a confirmed record whose workflow is missing, and returns slots of finished or missing workflows', async () => {
      const store = await db();
      const account = await crawlAccount();
      const client = new CrawlClient(account);
      // A crawl accepted (no start document: its start was confirmed) whose workflow Temporal no longer has.
      const lostId = `c_lost${Date.now().toString(36)}`;
      await store.collection<Doc>('crawls').insertOne(newCrawlDocument({ _id: lostId, account_id: account.accountId, key_id: account.keyId, url: crawlSite.url, domain: 'fixture.test', max_items: 1000, max_pages: 1000, include_patterns: [], exclude_patterns: [] }, LONG_AGO()) as never);
      // A crawl that ran to its end, and a slot it still holds (its end did not give it back), plus one for a record that never existed.
      const endedId = await client.started({ url: crawlSite.url, max_pages: 3 });
      expect((await client.finish(endedId)).crawl.status).to.equal('completed');
      await store.collection<Doc>('active_jobs').insertOne({ _id: endedId, slot: `${account.accountId}:1`, account_id: account.accountId, kind: 'crawl', created_at: LONG_AGO() } as never);
      await store.collection<Doc>('active_jobs').insertOne({ _id: `c_ghost${Date.now().toString(36)}`, slot: `${account.accountId}:2`, account_id: account.accountId, kind: 'crawl', created_at: LONG_AGO() } as never);

      const report = await reconcileNow();
      expect(report.restarted).to.be.at.least(1);
      expect(report.slotsReleased).to.be.at.least(2);
      expect(await store.collection<Doc>('active_jobs').countDocuments({ _id: endedId }), 'the slot of the finished crawl').to.equal(0);
      const { crawl } = await client.finish(lostId);
      expect(crawl.status).to.equal('completed');
      expect(crawl.coverage.pages_fetched).to.be.greaterThan(0);
      expect(await slotsOf(account.accountId), 'no active-job slot left held').to.equal(0);
    });
  });
});
