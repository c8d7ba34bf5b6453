/**
 * A Batch slice's work in parts and attempts, through the running service: a pause ends the slice's
 * activity at a task boundary (its results so far stored as a part) and the resume goes on from
 * them; a worker killed mid-slice is taken up from the progress its heartbeats carried. Either way
 * each task is fetched once (but for the one in flight), billed once, and every body reads back.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import { expect } from 'chai';
import type { SliceProgress } from '../../core/batch/runs/slice/progress';
import { ids } from '../../core/batch/store';
import { blobCollection } from '../../core/jobs/blobs';
import { batchRunWorkflowId } from '../../core/jobs/workflow-names';
import { connectTemporal, type TemporalHandle } from '../../base/temporal';
import { startFixtureServer, type FixtureServer } from '../helpers/fixtures';
import { serviceConfig } from '../helpers/app';
import { eventually, testStack } from '../helpers/stack';
import { accountsHandle, allResults, batchAccount, batchRequest, batchStore, creditsUsed, SiteRequests, startTargetSite, urls, waitForRun, waitForRunEnd, type Json } from './helpers';

describe('Batch: a slice in parts and attempts', function () {
  this.timeout(300_000);
  let temporal: TemporalHandle;
  before(() => {
    temporal = connectTemporal(serviceConfig());
  });
  after(() => temporal.close());

  /** The run's slice activities as the Temporal server has them. */
  const pendingSlices = async (runId: string) => (await temporal.client.workflow.getHandle(batchRunWorkflowId(runId)).describe()).raw.pendingActivities ?? [];

  /** Every result is successful, each body reads back as its page. */
  async function expectAllRead(key: string, job: string, count: number): Promise<Json[]> {
    const rows = await allResults(key, `/v1/jobs/${job}/results`);
    expect(rows).to.have.length(count);
    expect(rows.filter((row) => row.status === 'successful')).to.have.length(count);
    for (const row of rows) expect(await (await fetch(row.result_url as string)).text()).to.contain(`Page ${new URL(row.url as string).pathname}`);
    return rows;
  }

  it('ends a paused slice\'s activity, keeps what it fetched, and fetches only the rest after the resume', async () => {
    const site = await startTargetSite({ slowMs: 300 });
    try {
      const account = await batchAccount({ concurrency: 2 });
      const created = await batchRequest(account.key, 'POST', '/v1/jobs', { tasks: urls(site, 'slow', 30) });
      expect(created.status).to.equal(201);
      const job = created.body.job_id as string;
      const runId = created.body.latest_run.run_id as string;
      const started = (): number => [...site.hits.keys()].filter((path) => path.startsWith('/slow/')).length;
      await site.requests.until(() => started() >= 4);
      expect((await batchRequest(account.key, 'POST', `/v1/jobs/${job}/pause`)).status).to.equal(200);
      // The slice returns once its tasks in flight are done: nothing of the run waits in an activity.
      await eventually(async () => (await pendingSlices(runId)).length === 0, 150);
      const part = await (await batchStore()).results.findOne({ _id: ids.part(runId, 0, 0) });
      expect(part?.part, 'the paused slice stored its results as part 0').to.equal(0);
      const settled = started();
      expect(settled).to.be.lessThan(30);
      expect((await batchRequest(account.key, 'GET', `/v1/jobs/${job}`)).body.latest_run).to.include({ status: 'running', pause_state: 'paused' });

      expect((await batchRequest(account.key, 'POST', `/v1/jobs/${job}/resume`)).status).to.equal(200);
      const run = await waitForRun(account.key, job);
      expect(run.status).to.equal('completed');
      expect(run.stats).to.deep.include({ total: 30, completed: 30, successful: 30 });
      expect([...site.hits.entries()].filter(([path, hits]) => path.startsWith('/slow/') && hits !== 1), 'each task fetched once').to.deep.equal([]);
      expect(await creditsUsed(account.accountId), 'each success billed once across the parts').to.equal(30);
      expect(run.stats.spend.credits).to.equal(30);
      await expectAllRead(account.key, job, 30);
      // Bodies are blobs of the run whose ids name the part that wrote them: part 0 as before parts, part 1 as `1.<attempt>`.
      const blobs = await blobCollection((await accountsHandle()).db.db).distinct('blob', { owner: runId });
      expect(blobs).to.include(ids.pack(runId, 0, { part: 0, attempt: 1 }, 0)).and.to.include(ids.pack(runId, 0, { part: 1, attempt: 1 }, 0));
    } finally {
      await site.close();
    }
  });

  it('closes a paused slice when its run is stopped: what it fetched counts and is billed, no task starts after the stop', async () => {
    const site = await startTargetSite({ slowMs: 300 });
    try {
      const account = await batchAccount({ concurrency: 2 });
      const created = await batchRequest(account.key, 'POST', '/v1/jobs', { tasks: urls(site, 'slow', 30) });
      const job = created.body.job_id as string;
      const runId = created.body.latest_run.run_id as string;
      const started = (): number => [...site.hits.keys()].filter((path) => path.startsWith('/slow/')).length;
      await site.requests.until(() => started() >= 4);
      expect((await batchRequest(account.key, 'POST', `/v1/jobs/${job}/pause`)).status).to.equal(200);
      await eventually(async () => (await pendingSlices(runId)).length === 0, 150);
      const fetched = started();
      const stopped = await batchRequest(account.key, 'POST', `/v1/jobs/${job}/stop`);
      expect(stopped.body.status).to.equal('stopped');
      const record = await waitForRunEnd(runId);
      expect(record.status).to.equal('stopped');
      expect(started(), 'no task starts after the stop').to.equal(fetched);
      expect(record.stats).to.deep.include({ total: 30, completed: fetched, successful: fetched });
      const rows = await allResults(account.key, `/v1/jobs/${job}/results`);
      expect(rows.filter((row) => row.status === 'successful')).to.have.length(fetched);
      expect(rows.filter((row) => row.status === 'pending')).to.have.length(30 - fetched);
      expect(await creditsUsed(account.accountId)).to.equal(fetched);
    } finally {
      await site.close();
    }
  });

  it('takes a killed worker\'s slice up from its heartbeats\' progress: finished tasks are not fetched again', async () => {
    // `/hang/0` is not answered the first time (the task in flight when the worker dies); the rest at once.
    const hits = new Map<string, number>();
    const requests = new SiteRequests();
    const site: FixtureServer = await startFixtureServer(async (req, res) => {
      const path = req.url ?? '/';
      hits.set(path, (hits.get(path) ?? 0) + 1);
      requests.began();
      res.on('close', () => requests.ended());
      if (path.startsWith('/hang/') && hits.get(path) === 1) return;
      res.setHeader('Content-Type', 'text/html; charset=utf-8');
      res.end(`<html><head><title>${path}</title></head><body><h1>Page ${path}</h1></body></html>`);
    });
    try {
      const account = await batchAccount({ concurrency: 4 });
      const created = await batchRequest(account.key, 'POST', '/v1/jobs', { tasks: [...urls(site, 'hang', 1), ...urls(site, 'ok', 40)] });
      expect(created.status).to.equal(201);
      const job = created.body.job_id as string;
      const runId = created.body.latest_run.run_id as string;
      // Once the server holds a heartbeat naming the 40 finished tasks, the worker dies.
      await eventually(async () => {
        const [slice] = await pendingSlices(runId);
        const payload = slice?.heartbeatDetails?.payloads?.[0];
        const progress = payload ? defaultPayloadConverter.fromPayload<SliceProgress>(payload) : undefined;
        return progress?.done.length === 40;
      }, 300);
      await testStack().component('worker').kill();
      await testStack().startOne('worker');
      const run = await waitForRun(account.key, job, undefined, 120_000);
      expect(run.status).to.equal('completed');
      expect(run.stats).to.deep.include({ total: 41, completed: 41, successful: 41 });
      expect([...hits.entries()].filter(([path, count]) => path.startsWith('/ok/') && count !== 1), 'finished tasks fetched once').to.deep.equal([]);
      expect(hits.get('/hang/0')).to.be.at.least(2);
      expect(await creditsUsed(account.accountId), 'each success billed once across the attempts').to.equal(41);
      await expectAllRead(account.key, job, 41);
    } finally {
      await site.close();
    }
  });
});
