/**
 * A slice that did not finish is never final: a Temporal server killed mid-run makes the slices'
 * heartbeats fail, their attempts are cancelled and retried, and the run must still end with every
 * task fetched (no task left `pending`, none failed by our own abort) and each success billed once.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { testStack } from '../helpers/stack';
import { allResults, batchAccount, batchRequest, creditsUsed, startTargetSite, urls, waitForRun, type Json } from './helpers';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('Batch: a slice that did not finish is never final', function () {
  this.timeout(600_000);
  let site: Awaited<ReturnType<typeof startTargetSite>>;
  before(async () => {
    site = await startTargetSite({ slowMs: 3_000 });
  });
  after(() => site.close());

  it('completes with every task fetched when the Temporal server is killed mid-run', async () => {
    const count = 400;
    const account = await batchAccount({ concurrency: 20 });
    const created = await batchRequest(account.key, 'POST', '/v1/jobs', { tasks: urls(site, 'slow', count) });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const job = created.body.job_id as string;
    await waitForRun(account.key, job, ['running'], 60_000);
    await sleep(5_000);
    const temporal = testStack().component('temporal');
    await temporal.kill();
    // Longer than the slices' heartbeat time-out: the server gives their attempts up once it is back.
    await sleep(30_000);
    await temporal.start();

    const run = await waitForRun(account.key, job, ['completed', 'failed', 'stopped', 'deleted'], 240_000);
    const rows = await allResults(account.key, `/v1/jobs/${job}/results`);
    const byStatus = (status: string): Json[] => rows.filter((row) => row.status === status);
    const aborted = byStatus('failed').filter((row) => (row.error as Json | undefined)?.code === 'CTX0002');
    const unreached = urls(site, 'slow', count).filter(({ url }) => !site.hits.has(new URL(url).pathname));
    expect(
      { status: run.status, pending: byStatus('pending').length + byStatus('processing').length, aborted: aborted.length, unreached: unreached.length },
      JSON.stringify(run),
    ).to.deep.equal({ status: 'completed', pending: 0, aborted: 0, unreached: 0 });
    expect(rows).to.have.length(count);
    expect(run.stats).to.deep.include({ total: count, completed: count, successful: count, failed: 0 });
    expect(run.stats.spend.credits).to.equal(count);
    expect(await creditsUsed(account.accountId), 'each success billed once').to.equal(count);
  });

  // Each of the run's fetches listens to an abort signal: never all on the activity's one (Node warns past ten).
  it('leaves no MaxListenersExceededWarning in the worker log after the run', () => {
    const log = readFileSync(testStack().component('worker').logFile, 'utf8');
    const warnings = log.split('\n').filter((line) => line.includes('MaxListenersExceededWarning'));
    expect(warnings, warnings.slice(0, 3).join('\n')).to.deep.equal([]);
  });
});
