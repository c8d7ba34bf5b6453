import { expect } from 'chai';
import { testStack } from '../helpers/stack';
import { allResults, batchAccount, batchRequest, creditsUsed, startTargetSite, urls, type Json } from './helpers';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('Batch: durability', function () {
  this.timeout(600_000);
  let site: Awaited<ReturnType<typeof startTargetSite>>;
  before(async () => {
    site = await startTargetSite({ slowMs: 25 });
  });
  after(() => site.close());

  /** Runs a 2,500-task job, doing `during` once a fifth of it is done, and checks the end state exactly. */
  async function runThrough(during: () => Promise<void>): Promise<void> {
    const account = await batchAccount({ concurrency: 10 });
    const tasks = [...urls(site, 'slow', 2_400), ...urls(site, 'missing', 100)];
    const created = await batchRequest(account.key, 'POST', '/v1/jobs', { tasks });
    expect(created.status).to.equal(201);
    const job = created.body.job_id as string;
    let midway: Json | undefined;
    for (let poll = 0; poll < 2_000 && !midway; poll++) {
      const run = (await batchRequest(account.key, 'GET', `/v1/jobs/${job}`)).body.latest_run as Json;
      if ((run.stats.completed as number) >= 500) midway = run;
      else await sleep(100);
    }
    expect(midway?.status).to.equal('running');
    await during();
    let final: Json | undefined;
    for (let poll = 0; poll < 3_000 && !final; poll++) {
      const answer = await batchRequest(account.key, 'GET', `/v1/jobs/${job}`).catch(() => undefined);
      const run = answer?.body.latest_run as Json | undefined;
      if (run && ['completed', 'failed', 'stopped'].includes(run.status as string)) final = run;
      else await sleep(200);
    }
    expect(final?.status).to.equal('completed');
    expect(final?.stats).to.deep.include({ total: 2_500, completed: 2_500, successful: 2_400, failed: 100 });
    expect(final?.stats.spend.credits).to.equal(2_400);
    expect(await creditsUsed(account.accountId), 'each success billed once').to.equal(2_400);
    const rows = await allResults(account.key, `/v1/jobs/${job}/results`);
    expect(rows).to.have.length(2_500);
    expect(new Set(rows.map((row) => row.task_id)).size, 'one result per task').to.equal(2_500);
    expect(rows.filter((row) => row.status === 'successful')).to.have.length(2_400);
  }

  it('completes exactly when the worker is killed mid-run', async () => {
    await runThrough(async () => {
      await testStack().component('worker').kill();
      await sleep(1_000);
      await testStack().startOne('worker');
    });
  });

  it('completes when the Temporal server restarts mid-run', async () => {
    await runThrough(async () => {
      await testStack().component('temporal').stop();
      await sleep(2_000);
      await testStack().startOne('temporal');
    });
  });
});
