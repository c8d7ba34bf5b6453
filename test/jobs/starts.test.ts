/**
 * Starts that reconcile: a start cut short (the API killed while it waits on a Temporal that is down)
 * is taken over by the retry with the same Idempotency-Key and leads to the same record, which runs
 * to its end; nothing stays held.
 */
import { expect } from 'chai';
import { startCrawlSite, type CrawlSite } from '../fixtures/crawl-site/server';
import { testStack } from '../helpers/stack';
import { batchRequest } from '../webhooks/helpers';
import { accountsHandle, batchAccount, startTargetSite, urls, waitForRun } from '../batch/helpers';
import { CrawlClient, crawlAccount, sleep, type Json } from '../crawls/helpers';
import type { FixtureServer } from '../helpers/fixtures';

const db = async () => (await accountsHandle()).db.db;

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
      async () => (await store.collection('batch_runs').countDocuments({ account_id: account.accountId })) > 0,
    );
    const firstRun = await store.collection('batch_runs').findOne({ account_id: account.accountId });

    const answer = await retried(() => batchRequest(account.key, 'POST', '/v1/jobs', body, headers));
    expect(answer.status, JSON.stringify(answer.body)).to.be.oneOf([200, 201]);
    const jobId = answer.body.job_id as string;
    expect(jobId).to.equal(firstRun?.job_id);
    const replay = await batchRequest(account.key, 'POST', '/v1/jobs', body, headers);
    expect(replay.body.job_id, 'a replay answers the same job').to.equal(jobId);
    expect(await store.collection('batch_jobs').countDocuments({ account_id: account.accountId }), 'one job for one key').to.equal(1);
    expect(await store.collection('batch_runs').countDocuments({ account_id: account.accountId }), 'one run').to.equal(1);

    const run = await waitForRun(account.key, jobId);
    expect(run.status).to.equal('completed');
    expect(run.run_id).to.equal(firstRun?._id);
    expect(await slotsOf(account.accountId), 'no active-job slot left held').to.equal(0);
  });
});
