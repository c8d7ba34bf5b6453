import { expect } from 'chai';
import { crawlCollections, newCrawlDocument } from '../../core/crawls/store';
import type { CrawlSpec, CrawlTuning } from '../../core/crawls/types';
import { ACCOUNT_ATTRIBUTE, CRAWL_WORKFLOW_TYPE, crawlWorkflowId, STATUS_ATTRIBUTE } from '../../core/jobs/workflow-names';
import { newId } from '../../base/ids';
import { connectTemporal, type TemporalHandle } from '../../base/temporal';
import { serviceConfig } from '../helpers/app';
import { startCrawlSite, type CrawlSite } from '../fixtures/crawl-site/server';
import { accountsHandle, CrawlClient, crawlAccount, urlsOf } from './helpers';

describe('crawls: the workflow', function () {
  let site: CrawlSite;
  let temporal: TemporalHandle;

  before(async () => {
    site = await startCrawlSite({ pages: 300, fanout: 3, twins: true, name: 'flow' });
    temporal = connectTemporal(serviceConfig());
  });
  after(async () => {
    await site.close();
    await temporal.close();
  });

  it('continues as new to bound its history, losing nothing', async () => {
    const account = await crawlAccount();
    const crawlId = newId('c');
    const doc = newCrawlDocument({
      _id: crawlId,
      account_id: account.accountId,
      key_id: account.keyId,
      url: site.url,
      domain: 'fixture.test',
      max_items: 10_000,
      max_pages: 10_000,
      include_patterns: [],
      exclude_patterns: [],
    });
    await crawlCollections((await accountsHandle()).db.db).crawls.insertOne(doc);
    const spec: CrawlSpec = { crawlId, accountId: account.accountId, keyId: account.keyId, url: site.url, domain: 'fixture.test', maxItems: 10_000, maxPages: 10_000, include: [], exclude: [] };
    const tuning: CrawlTuning = { slicePages: 25, window: 2, concurrency: 4, historyLimit: 120 };
    const handle = await temporal.client.workflow.start(CRAWL_WORKFLOW_TYPE, {
      taskQueue: serviceConfig().temporalTaskQueue,
      workflowId: crawlWorkflowId(crawlId),
      args: [{ spec, tuning }],
    });
    const client = new CrawlClient(account);
    const { crawl, results } = await client.finish(crawlId);
    expect(crawl.status).to.equal('completed');
    expect([...urlsOf(results)].sort()).to.deep.equal([...site.graph.expected().keys()].sort());

    const first = temporal.client.workflow.getHandle(crawlWorkflowId(crawlId), handle.firstExecutionRunId);
    expect((await first.describe()).status.name).to.equal('CONTINUED_AS_NEW');
    // The workflow returns right after its last publish.
    await temporal.client.workflow.getHandle(crawlWorkflowId(crawlId)).result();
    const latest = await temporal.client.workflow.getHandle(crawlWorkflowId(crawlId)).describe();
    expect(latest.runId).to.not.equal(handle.firstExecutionRunId);
    expect(latest.status.name).to.equal('COMPLETED');
    // A run drains its window before continuing: its history ends a little past the limit.
    const history = await first.fetchHistory();
    expect(history.events?.length).to.be.lessThan(tuning.historyLimit + 60);
  });

  it('carries the account and status search attributes', async () => {
    const account = await crawlAccount();
    const client = new CrawlClient(account);
    const crawlId = await client.started({ url: site.url, max_items: 20 });
    const running = await temporal.client.workflow.getHandle(crawlWorkflowId(crawlId)).describe();
    expect(running.typedSearchAttributes.get(ACCOUNT_ATTRIBUTE)).to.equal(account.accountId);
    expect(running.typedSearchAttributes.get(STATUS_ATTRIBUTE)).to.equal('running');
    await client.finish(crawlId);
    expect(await temporal.client.workflow.getHandle(crawlWorkflowId(crawlId)).result()).to.deep.include({ status: 'completed' });
    const ended = await temporal.client.workflow.getHandle(crawlWorkflowId(crawlId)).describe();
    expect(ended.status.name).to.equal('COMPLETED');
    expect(ended.typedSearchAttributes.get(STATUS_ATTRIBUTE)).to.equal('completed');
    expect(ended.typedSearchAttributes.get(ACCOUNT_ATTRIBUTE)).to.equal(account.accountId);
  });
});
