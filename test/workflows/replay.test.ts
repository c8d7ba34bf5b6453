import { expect } from 'chai';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { batchRunWorkflowId } from '../../core/jobs/workflow-names';
import { crawlCollections, newCrawlDocument } from '../../core/crawls/store';
import type { CrawlSpec, CrawlTuning } from '../../core/crawls/types';
import { CRAWL_WORKFLOW_TYPE, crawlWorkflowId } from '../../core/jobs/workflow-names';
import { newId } from '../../base/ids';
import { connectTemporal, type TemporalHandle } from '../../base/temporal';
import { startCrawlSite, type CrawlSite } from '../fixtures/crawl-site/server';
import { serviceConfig } from '../helpers/app';
import { historyFromText, historyToText, replayFailures, type History } from '../helpers/replay';
import { batchAccount, batchRequest, startTargetSite, urls, waitForRun } from '../batch/helpers';
import { accountsHandle, CrawlClient, crawlAccount } from '../crawls/helpers';

/**
 * Where this test leaves the histories it captured: copied into test/fixtures/histories they become
 * the recorded histories every later change must replay (test/unit/workflows/replay.test.ts).
 */
const CAPTURED = path.join(os.tmpdir(), 'fetchplane-histories');

describe('workflow determinism: histories of the real stack', function () {
  this.timeout(300_000);
  let site: CrawlSite;
  let temporal: TemporalHandle;
  const captured: Array<{ workflowId: string; history: History }> = [];

  before(async () => {
    site = await startCrawlSite({ pages: 80, fanout: 3, twins: true, name: 'replay' });
    temporal = connectTemporal(serviceConfig());
  });
  after(async () => {
    await site.close();
    await temporal.close();
  });

  /** Every run of a workflow id, oldest first: continue-as-new makes several, each naming the one before. */
  async function capture(workflowId: string, name: string): Promise<void> {
    const runs: History[] = [];
    let runId: string | undefined;
    do {
      const history = await temporal.client.workflow.getHandle(workflowId, runId).fetchHistory();
      runs.unshift(history);
      runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
    } while (runId);
    mkdirSync(CAPTURED, { recursive: true });
    for (const [index, history] of runs.entries()) {
      const id = `${name}-${index}`;
      const text = historyToText(history);
      // What is written is what the unit replay will read: replay the round-tripped history.
      captured.push({ workflowId: id, history: historyFromText(text) });
      writeFileSync(path.join(CAPTURED, `${id}.json`), text);
    }
  }

  it('captures a crawl that continues as new and one stopped by its caller, and a Batch run', async () => {
    // A crawl whose history limit makes it continue as new (after about two slices, however the machine
    // batches its workflow tasks), started as the API would start it.
    const account = await crawlAccount();
    const crawlId = newId('c');
    await crawlCollections((await accountsHandle()).db.db).crawls.insertOne(
      newCrawlDocument({ _id: crawlId, account_id: account.accountId, key_id: account.keyId, url: site.url, domain: 'fixture.test', max_items: 1_000, max_pages: 1_000, include_patterns: [], exclude_patterns: [] }),
    );
    const spec: CrawlSpec = { crawlId, accountId: account.accountId, keyId: account.keyId, url: site.url, domain: 'fixture.test', maxItems: 1_000, maxPages: 1_000, include: [], exclude: [] };
    const tuning: CrawlTuning = { slicePages: 25, window: 2, concurrency: 4, historyLimit: 30 };
    await temporal.client.workflow.start(CRAWL_WORKFLOW_TYPE, { taskQueue: serviceConfig().temporalTaskQueue, workflowId: crawlWorkflowId(crawlId), args: [{ spec, tuning }] });
    const client = new CrawlClient(account);
    expect((await client.finish(crawlId)).crawl.status).to.equal('completed');
    await temporal.client.workflow.getHandle(crawlWorkflowId(crawlId)).result();
    await capture(crawlWorkflowId(crawlId), 'crawl-continued');

    const stopped = await client.started({ url: site.url, max_items: 1_000 });
    expect((await client.stop(stopped)).status).to.equal(200);
    await client.finish(stopped);
    await temporal.client.workflow.getHandle(crawlWorkflowId(stopped)).result();
    await capture(crawlWorkflowId(stopped), 'crawl-stopped');

    const target = await startTargetSite();
    try {
      const batch = await batchAccount();
      const created = await batchRequest(batch.key, 'POST', '/v1/jobs', { tasks: urls(target, 'ok', 30) });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const run = await waitForRun(batch.key, created.body.job_id as string);
      expect(run.status).to.equal('completed');
      await temporal.client.workflow.getHandle(batchRunWorkflowId(run.run_id as string)).result();
      await capture(batchRunWorkflowId(run.run_id as string), 'run-completed');
    } finally {
      await target.close();
    }
    expect(captured.length).to.be.at.least(4);
  });

  it('replays them with the workflow code of this tree', async () => {
    expect(captured.length, 'histories captured by the test before').to.be.at.least(4);
    expect(await replayFailures(captured)).to.deep.equal([]);
  });
});
