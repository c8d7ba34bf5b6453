/**
 * Work spreads over workers: with a second worker polling the same task queue, the slices of one run
 * go to both (a slice is taken from the task queue by any worker, not handed back to the worker that
 * ran the workflow task).
 */
import { expect } from 'chai';
import { batchRunWorkflowId } from '../../core/jobs/workflow-names';
import { connectTemporal, type TemporalHandle } from '../../base/temporal';
import { serviceConfig } from '../helpers/app';
import { startExtraWorker, type ExtraWorker } from '../helpers/second-worker';
import { testStack } from '../helpers/stack';
import { allResults, batchAccount, batchRequest, startTargetSite, urls, waitForRun } from './helpers';

describe('Batch: work spreads over workers', function () {
  this.timeout(300_000);
  let site: Awaited<ReturnType<typeof startTargetSite>>;
  let second: ExtraWorker | undefined;
  let temporal: TemporalHandle;

  before(async () => {
    site = await startTargetSite({ slowMs: 100 });
    temporal = connectTemporal(serviceConfig());
    second = await startExtraWorker(testStack(), 'worker-second');
  });
  after(async () => {
    await second?.stop();
    await temporal.close();
    await site.close();
  });

  it('runs the slices of one run on both workers', async () => {
    const count = 3_000;
    const account = await batchAccount({ concurrency: 20 });
    const created = await batchRequest(account.key, 'POST', '/v1/jobs', { tasks: urls(site, 'slow', count) });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const job = created.body.job_id as string;
    const run = await waitForRun(account.key, job, ['completed', 'failed', 'stopped', 'deleted'], 240_000);
    expect(run.status).to.equal('completed');
    expect(run.stats).to.deep.include({ total: count, successful: count });
    expect(await allResults(account.key, `/v1/jobs/${job}/results`, 'successful')).to.have.length(count);

    // Who started each slice, from the run's history (12 slices: no continue-as-new).
    const history = await temporal.client.workflow.getHandle(batchRunWorkflowId(run.run_id as string)).fetchHistory();
    const slices = new Set<string>();
    const identities: string[] = [];
    for (const event of history.events ?? []) {
      const scheduled = event.activityTaskScheduledEventAttributes;
      if (scheduled?.activityType?.name === 'batchSlice') slices.add(String(event.eventId));
      const started = event.activityTaskStartedEventAttributes;
      if (started && slices.has(String(started.scheduledEventId))) identities.push(started.identity ?? '');
    }
    expect(slices.size).to.equal(Math.ceil(count / 250));
    const perWorker = identities.reduce<Record<string, number>>((counts, identity) => ({ ...counts, [identity]: (counts[identity] ?? 0) + 1 }), {});
    expect(Object.keys(perWorker), JSON.stringify(perWorker)).to.have.length(2);
    expect(perWorker, JSON.stringify(perWorker)).to.have.property(second?.identity ?? 'second worker');
  });
});
