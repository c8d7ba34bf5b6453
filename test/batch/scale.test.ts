import { expect } from 'chai';
import { adminJson } from '../helpers/admin';
import { allResults, batchAccount, batchRequest, creditsUsed, startTargetSite, urls, waitForRun, type Json } from './helpers';

describe('Batch at the limit of a job', function () {
  this.timeout(900_000);
  let site: Awaited<ReturnType<typeof startTargetSite>>;
  before(async () => {
    site = await startTargetSite();
  });
  after(() => site.close());

  it('runs a 100,000-task job submitted in 10 calls and pages through every result exactly once', async () => {
    const account = await batchAccount({ concurrency: 32 });
    const created = await batchRequest(account.key, 'POST', '/v1/jobs', { type: 'regular', status: 'open', tasks: [] });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const job = created.body.job_id as string;
    for (let call = 0; call < 10; call++) {
      const added = await batchRequest(account.key, 'POST', `/v1/jobs/${job}/tasks`, {
        tasks: urls(site, 'ok', 10_000, call * 10_000),
        last_batch: false,
      });
      expect(added.status, JSON.stringify(added.body)).to.equal(200);
      expect(added.body).to.include({ accepted_tasks: 10_000, job_status: 'open' });
    }
    const tooMany = await batchRequest(account.key, 'POST', `/v1/jobs/${job}/tasks`, { tasks: urls(site, 'ok', 10_001, 100_000) });
    expect(tooMany.status).to.equal(400);
    expect(tooMany.body.code).to.equal('invalid_argument');
    const beyond = await batchRequest(account.key, 'POST', `/v1/jobs/${job}/tasks`, { tasks: urls(site, 'ok', 1, 100_000), last_batch: true });
    expect(beyond.status).to.equal(400);
    expect(beyond.body).to.include({ code: 'invalid_argument' });
    expect(beyond.body.detail).to.contain('100000');
    const closed = await batchRequest(account.key, 'POST', `/v1/jobs/${job}/close`);
    expect(closed.body).to.include({ status: 'closed' });

    const run = await waitForRun(account.key, job, undefined, 800_000);
    expect(run.status).to.equal('completed');
    expect(run.stats).to.deep.include({ total: 100_000, completed: 100_000, successful: 100_000, failed: 0 });
    expect(run.stats.spend.credits).to.equal(100_000);
    expect(await creditsUsed(account.accountId)).to.equal(100_000);

    const rows = await allResults(account.key, `/v1/jobs/${job}/results`);
    expect(rows).to.have.length(100_000);
    expect(new Set(rows.map((row) => row.task_id)).size, 'each task once').to.equal(100_000);
    const expected = urls(site, 'ok', 100_000).map((task) => task.url);
    expect(rows.every((row, index) => row.url === expected[index] && row.status === 'successful'), 'in submission order, all successful').to.equal(true);

    // What an operator sees of it.
    const listed = (await adminJson('jobs', account.accountId)).jobs as Json[];
    expect(listed[0]).to.deep.include({ job_id: job, status: 'closed', tasks: 100_000 });
    expect(listed[0]!.latest_run).to.deep.include({ status: 'completed', progress: '100000/100000', successful: 100_000, credits: 100_000 });
  });
});
