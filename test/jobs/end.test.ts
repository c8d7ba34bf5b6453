/**
 * The job-end routine (core/jobs/end.ts) on the stack's store, through each surface's adapter: the
 * first end written stands and later ones answer it; the slot the job held is given back; a Batch
 * run's webhook event is answered again when its end is retried, without moving its outcome back.
 */
import { expect } from 'chai';
import { endBatchRun } from '../../core/batch/runs/end';
import { newRunRecord } from '../../core/batch/runs/records';
import { batchCollections, type JobDoc } from '../../core/batch/store';
import { CrawlEnds, recordEnd, crawlEndSurface } from '../../core/crawls/ends';
import { endPreparation, giveBackPreparation } from '../../core/extract/ends';
import { extractCollections, type PreparedDomainDoc } from '../../core/extract/store';
import { ActiveJobs } from '../../core/jobs/active-jobs';
import { endJob, JobMissing } from '../../core/jobs/end';
import { newId } from '../../base/ids';
import { createWebhookEvents } from '../../core/webhooks/events';
import { accountsHandle } from '../batch/helpers';

const db = async () => (await accountsHandle()).db.db;

function jobDoc(accountId: string, webhook: JobDoc['webhook']): JobDoc {
  const now = new Date();
  return {
    _id: newId('job'), account_id: accountId, key_id: 'k_end', type: 'regular', status: 'closed', params: {}, external_id: null, name: null, metadata: null,
    webhook, schedule: null, schedule_state: null, next_scheduled_run: null, task_count: 3, slice_count: 1, writing: null, run_count: 0, latest_run_id: null,
    created_at: now, updated_at: now,
  };
}

describe('job ends (core/jobs/end.ts)', function () {
  this.timeout(60_000);

  it('a Batch run: the first end stands, its slot is given back, its webhook event is answered again on a retry', async () => {
    const store = await db();
    const { jobs, runs } = batchCollections(store);
    const accountId = newId('a');
    const job = jobDoc(accountId, { url: 'http://127.0.0.1:9/hook', signature: false });
    await jobs.insertOne(job);
    const run = newRunRecord(job, job.key_id, newId('run'), 'manual');
    await runs.insertOne(run);
    const activeJobs = new ActiveJobs(store);
    expect((await activeJobs.acquire(accountId, 2, { id: run._id, kind: 'batch' })).ok).to.equal(true);
    const deps = { db: store, activeJobs, events: createWebhookEvents(store) };
    const stats = { ...run.stats, completed: 3, successful: 3 };

    const first = await endBatchRun(deps, run._id, { status: 'completed', stats });
    expect(first.won).to.equal(true);
    expect(first.record.status).to.equal('completed');
    expect(first.record.stats.successful).to.equal(3);
    expect(first.record.ended_at).to.be.instanceOf(Date);
    expect(await activeJobs.inUse(accountId)).to.equal(0);
    expect(first.follow?.webhook?.key).to.be.a('string');
    expect((await runs.findOne({ _id: run._id }))?.webhook_outcome).to.equal('pending');

    // Delivered meanwhile; then a second end (a retried activity, a late writer) arrives.
    await runs.updateOne({ _id: run._id }, { $set: { webhook_outcome: 'delivered' } });
    const second = await endBatchRun(deps, run._id, { status: 'failed', stats: run.stats, failure: { reason: 'late', detail: 'a later end' } });
    expect(second.won).to.equal(false);
    expect(second.record.status).to.equal('completed');
    expect(second.record.failure_reason).to.equal(null);
    expect(second.record.ended_at?.getTime()).to.equal(first.record.ended_at?.getTime());
    expect(second.follow?.webhook).to.deep.equal(first.follow?.webhook);
    const stored = await runs.findOne({ _id: run._id });
    expect(stored?.status).to.equal('completed');
    expect(stored?.webhook_outcome).to.equal('delivered');
  });

  it('a Batch run the API deleted ends deleted, sends no webhook event, and a missing run is refused', async () => {
    const store = await db();
    const { jobs, runs, controls } = batchCollections(store);
    const job = jobDoc(newId('a'), { url: 'http://127.0.0.1:9/hook', signature: false });
    await jobs.insertOne(job);
    const run = newRunRecord(job, job.key_id, newId('run'), 'manual');
    await runs.insertOne(run);
    await controls.insertOne({ _id: run._id, job_id: job._id, pause_state: 'active', stop: 'deleted', updated_at: new Date() });
    const deps = { db: store, activeJobs: new ActiveJobs(store), events: createWebhookEvents(store) };
    const ended = await endBatchRun(deps, run._id, { status: 'completed', stats: run.stats });
    expect(ended.record.status).to.equal('deleted');
    expect(ended.follow).to.deep.equal({});
    let refused: unknown;
    await endBatchRun(deps, newId('run'), { status: 'completed' }).catch((error: unknown) => (refused = error));
    expect(refused).to.be.instanceOf(JobMissing);
  });

  it('a crawl: of two ends racing, one is written and both answer it; the slot is given back', async () => {
    const store = await db();
    const accountId = newId('a');
    const crawlId = newId('c');
    const activeJobs = new ActiveJobs(store);
    expect((await activeJobs.acquire(accountId, 2, { id: crawlId, kind: 'crawl' })).ok).to.equal(true);
    const surface = crawlEndSurface({ ends: new CrawlEnds(store), activeJobs });
    const [a, b] = await Promise.all([
      endJob(surface, crawlId, { status: 'stopped', stop_reason: 'user' }),
      endJob(surface, crawlId, { status: 'completed' }),
    ]);
    expect([a.won, b.won].filter(Boolean)).to.have.length(1);
    expect(a.record).to.deep.equal(b.record);
    expect(await activeJobs.inUse(accountId)).to.equal(0);
    const again = await recordEnd({ ends: new CrawlEnds(store), activeJobs }, crawlId, { status: 'failed', error: { code: 'internal_error', detail: 'late' } });
    expect(again).to.deep.equal(a.record);
  });

  it('an Extract preparation: a failure that keeps no slot gives it back, a later end loses, a give-back without a record returns its slot', async () => {
    const store = await db();
    const { domains, slots } = extractCollections(store);
    const accountId = newId('a');
    const domain = `${newId('d')}.example`.toLowerCase();
    const slotId = `${accountId}:2026-11:${domain}:1`;
    const now = new Date();
    await slots.insertOne({ _id: slotId, account_id: accountId, domain, month: '2026-11', created_at: now, returned: false });
    const record: PreparedDomainDoc = { _id: domain, status: 'preparing', state: 'discovering', roles: [], started_by: slotId, example_urls: [], submitted_at: now, updated_at: now, verticals: [] };
    await domains.insertOne(record);

    const failed = await endPreparation(store, domain, { status: 'failed', failure: { code: 'discovery_failed', detail: 'no pages' }, startedBy: slotId });
    expect(failed.won).to.equal(true);
    expect(failed.record.status).to.equal('failed');
    expect(failed.record.failure).to.deep.equal({ code: 'discovery_failed', detail: 'no pages', slot_consumed: false });
    expect((await slots.findOne({ _id: slotId }))?.returned).to.equal(true);

    const late = await endPreparation(store, domain, { status: 'ready', roles: [], recipeVersion: 1, verticals: [], startedBy: slotId });
    expect(late.won).to.equal(false);
    expect((await domains.findOne({ _id: domain }))?.status).to.equal('failed');

    // A failure that consumes the slot keeps it.
    const kept = `${accountId}:2026-11:${domain}:2`;
    await slots.insertOne({ _id: kept, account_id: accountId, domain, month: '2026-11', created_at: now, returned: false });
    await domains.replaceOne({ _id: domain }, { ...record, started_by: kept });
    await endPreparation(store, domain, { status: 'failed', failure: { code: 'verification_failed', detail: 'no match' }, startedBy: kept });
    expect((await slots.findOne({ _id: kept }))?.returned).to.equal(false);

    const orphan = `${accountId}:2026-11:none.${domain}:3`;
    await slots.insertOne({ _id: orphan, account_id: accountId, domain: `none.${domain}`, month: '2026-11', created_at: now, returned: false });
    await giveBackPreparation(store, `none.${domain}`, orphan);
    expect((await slots.findOne({ _id: orphan }))?.returned).to.equal(true);
  });
});
