/**
 * Workflow branches driven through the real workflow code with activities the test writes (see
 * test/helpers/mocked-worker.ts): a Batch run paused, resumed, stopped, grown, continued as new, its
 * slices returning on a pause and resuming from their heartbeats' progress; a
 * scheduled fire refused and one that runs; a webhook delivery that gives up when its window has
 * passed; the outcomes of a domain preparation. Each workflow's history is then replayed, and left in
 * `<tmp>/fetchplane-histories/` to be kept in test/fixtures/histories.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { expect } from 'chai';
import type { RunEndInput, RunInput, ScheduledFire, SliceInput, SliceSummary } from '../../core/batch/run-types';
import type { Draft, Kind, RoleOutcome, Sample } from '../../core/extract/preparation';
import {
  BATCH_EXPORT_WORKFLOW_TYPE,
  BATCH_RUN_WORKFLOW_TYPE,
  batchRunWorkflowId,
  PAUSE_SIGNAL,
  PREPARE_WORKFLOW_TYPE,
  RECONCILE_WORKFLOW_TYPE,
  RESUME_SIGNAL,
  RETENTION_WORKFLOW_TYPE,
  SCHEDULED_FIRE_WORKFLOW_TYPE,
  SELF_CHECK_WORKFLOW_TYPE,
  STOP_SIGNAL,
  TASKS_ADDED_SIGNAL,
  WEBHOOK_WORKFLOW_TYPE,
  webhookWorkflowId,
  type TasksAdded,
} from '../../core/jobs/workflow-names';
import type { WebhookRetry } from '../../core/webhooks/deliveries';
import { historyFromText, historyToText, replayFailures, type History } from '../helpers/replay';
import { gate, startMockedWorker, until, type MockedWorker } from '../helpers/mocked-worker';

const CAPTURED = path.join(os.tmpdir(), 'fetchplane-histories');
/** A delivery window of seconds instead of hours: the give-up path within a test. */
const RETRY: WebhookRetry = { initialMs: 100, maxIntervalMs: 300, totalMs: 2_000, attemptMs: 1_000 };
const TASKS_PER_SLICE = 10;

const summary = (n: number): SliceSummary => ({ n, tasks: TASKS_PER_SLICE, successful: TASKS_PER_SLICE, failed: 0, pending: 0, failureReasons: {}, credits: TASKS_PER_SLICE });

let sequence = 0;
const runInput = (overrides: Partial<RunInput> = {}): RunInput => {
  const runId = `r_mocked_${process.pid}_${Date.now().toString(36)}_${sequence++}`;
  return { runId, jobId: `j_${runId}`, accountId: 'a_mocked', keyId: 'k_mocked', concurrency: 4, sliceCount: 2, total: 2 * TASKS_PER_SLICE, lastBatch: true, slicesInFlight: 1, webhookRetry: RETRY, ...overrides };
};

const kind: Kind = { role: 'product', type: 'detail', urls: ['https://shop.test/p/1'] };
const sampleOf = (domain: string, attempt: number): Sample => ({ role: kind.role, type: kind.type, url: `https://${domain}/p/${attempt}`, induce: [`https://${domain}/i/${attempt}`], verify: [`https://${domain}/v/${attempt}`], unusable: 0, other: 0, rendered: false } as Sample);

/** What each preparation scenario's activities answer, by domain. */
const PREPARATIONS: Record<string, { discovery: 'ok' | 'failed'; draft: Draft['ok'] | 'unusable'; verify: Array<RoleOutcome['ok'] | 'not_verified'> }> = {
  'ready.test': { discovery: 'ok', draft: true, verify: [true] },
  'second.test': { discovery: 'ok', draft: true, verify: ['not_verified', true] },
  'exhausted.test': { discovery: 'ok', draft: true, verify: ['not_verified', 'not_verified'] },
  'unusable.test': { discovery: 'ok', draft: 'unusable', verify: [] },
  'nodiscovery.test': { discovery: 'failed', draft: true, verify: [] },
};

describe('workflows with mocked activities on the dev server', function () {
  this.timeout(120_000);
  let mocked: MockedWorker;
  const captured: Array<{ workflowId: string; history: History }> = [];
  /** Slices held until the test opens them, by run and slice number. */
  const held = new Map<string, ReturnType<typeof gate<void>>>();
  const verifyAttempts = new Map<string, number>();
  let deliveries: 'deliver' | 'refuse' | 'gone' = 'deliver';
  /** The heartbeat details a retried slice attempt started with, by run. */
  const progressSeen = new Map<string, unknown>();

  before(async () => {
    mocked = await startMockedWorker({
      batchSlice: async (input: SliceInput) => {
        await held.get(`${input.runId}/${input.n}`)?.promise;
        // A slice that finds its run paused stores what it has and returns; its next part finishes it,
        // or (the run stopped) closes it with four tasks done.
        if (input.runId.endsWith('_slicepause') && input.n === 0) {
          if (!input.part) return { ...summary(input.n), successful: 4, pending: 6, paused: true };
          if (input.closing) return { ...summary(input.n), successful: 4, pending: 6 };
        }
        // The first attempt reports two tasks done, then fails; the next starts from them.
        if (input.runId.endsWith('_progress') && input.n === 0) {
          const context = Context.current();
          if (context.info.attempt === 1) {
            context.heartbeat({ part: 0, done: [[0, { status: 'successful' }], [1, { status: 'failed' }]] });
            await new Promise((resolve) => setTimeout(resolve, 500));
            throw ApplicationFailure.create({ type: 'worker_lost', message: 'the attempt was cut short' });
          }
          progressSeen.set(input.runId, context.info.heartbeatDetails);
        }
        return summary(input.n);
      },
      batchRunProgress: async () => undefined,
      batchRunEnd: async (input: RunEndInput) => (input.runId.endsWith('_hooked') ? { webhook: { key: `key-${input.runId}`, eventId: `ev-${input.runId}` } } : {}),
      batchScheduledFire: async (input: { jobId: string; fireId: string }): Promise<ScheduledFire> => {
        if (input.jobId.startsWith('j_refused')) return { kind: 'ended', webhook: { key: `key-${input.jobId}`, eventId: `ev-${input.jobId}` }, webhookRetry: RETRY };
        if (input.jobId.startsWith('j_skipped')) return { kind: 'skipped', reason: 'the last fire still runs' };
        const run = runInput({ jobId: input.jobId });
        return { kind: 'run', input: run, jobId: input.jobId, accountId: run.accountId };
      },
      batchExport: async () => undefined,
      deliverWebhook: async (key: string) => {
        if (deliveries === 'gone') throw ApplicationFailure.create({ type: 'webhook_event_missing', message: `webhook event ${key} does not exist`, nonRetryable: true });
        if (deliveries === 'refuse') throw ApplicationFailure.create({ type: 'webhook_attempt_failed', message: 'the receiver answered 503' });
        return { delivered: true, attempts: 1 };
      },
      recordWebhookGaveUp: async (key: string) => ({ delivered: false, attempts: mocked.calls.deliverWebhook?.filter(([called]) => called === key).length ?? 0 }),
      recordWebhookStart: async () => undefined,
      recordSelfCheck: async () => ({ worker: 'mocked' }),
      retentionSweep: async () => ({}),
      reconcileStarts: async () => ({}),
      extractExamples: async (domain: string) => ({ ok: true, kinds: [{ ...kind, urls: [`https://${domain}/p/1`] }] }),
      extractDiscover: async (domain: string) =>
        PREPARATIONS[domain]?.discovery === 'failed' ? { ok: false, code: 'discovery_failed', detail: 'no page of the site answered' } : { ok: true, kinds: [{ ...kind, urls: [`https://${domain}/p/1`] }] },
      extractSetState: async () => undefined,
      extractSample: async (domain: string, _kind: Kind, attempt: number) => sampleOf(domain, attempt),
      extractInduce: async (sample: Sample): Promise<Draft> => {
        const domain = new URL(sample.url).hostname;
        return PREPARATIONS[domain]?.draft === 'unusable' ? { ok: false, reason: 'unusable', detail: 'every sampled page was empty' } : ({ ok: true, role: { role: sample.role } } as unknown as Draft);
      },
      extractVerify: async (role: { role: string }, verify: string[]): Promise<RoleOutcome> => {
        const domain = new URL(verify[0] ?? 'https://unknown.test/').hostname;
        const attempt = (verifyAttempts.get(domain) ?? 0) + 1;
        verifyAttempts.set(domain, attempt);
        return PREPARATIONS[domain]?.verify[attempt - 1] === true
          ? ({ ok: true, recipe: { role: role.role }, detail: 'verified on held-out pages' } as unknown as RoleOutcome)
          : { ok: false, role: role.role, url: `https://${domain}/p/1`, reason: 'not_verified', detail: 'fields differ on held-out pages' };
      },
      extractFinish: async () => undefined,
    });
  });

  after(async () => {
    await mocked?.close();
  });

  /** Every run of a workflow id, oldest first, kept for the replay at the end. */
  async function capture(workflowId: string, name: string): Promise<void> {
    const runs: History[] = [];
    let runId: string | undefined;
    do {
      const history = await mocked.client.workflow.getHandle(workflowId, runId).fetchHistory();
      runs.unshift(history);
      runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
    } while (runId);
    mkdirSync(CAPTURED, { recursive: true });
    for (const [index, history] of runs.entries()) {
      const text = historyToText(history);
      captured.push({ workflowId: `${name}-${index}`, history: historyFromText(text) });
      writeFileSync(path.join(CAPTURED, `${name}-${index}.json`), text);
    }
  }

  /** Events of a workflow's current run, once the workflow task after the last signal has completed. */
  async function afterSignals(workflowId: string) {
    let events: NonNullable<History['events']> = [];
    await until('the signals to be handled', async () => {
      events = (await mocked.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
      const lastSignal = events.findLastIndex((event) => event.workflowExecutionSignaledEventAttributes);
      return lastSignal >= 0 && events.slice(lastSignal).some((event) => event.workflowTaskCompletedEventAttributes);
    });
    return events;
  }

  const slicesOf = (runId: string): number[] =>
    (mocked.calls.batchSlice ?? []).map(([input]) => input as SliceInput).filter((input) => input.runId === runId).map((input) => input.n);
  const sliceInputsOf = (runId: string): SliceInput[] =>
    (mocked.calls.batchSlice ?? []).map(([input]) => input as SliceInput).filter((input) => input.runId === runId);
  const endOf = (runId: string): RunEndInput | undefined =>
    (mocked.calls.batchRunEnd ?? []).map(([input]) => input as RunEndInput).find((input) => input.runId === runId);

  it('holds a paused run, grows it with added tasks, resumes it to the end and starts its webhook delivery', async () => {
    const input = runInput({ lastBatch: false, runId: `r_paused_${Date.now().toString(36)}_hooked` });
    const workflowId = batchRunWorkflowId(input.runId);
    const handle = await mocked.client.workflow.start(BATCH_RUN_WORKFLOW_TYPE, { taskQueue: mocked.taskQueue, workflowId, args: [input] });
    // An open job: both known slices run, then the run waits for more tasks.
    await until('the known slices', () => slicesOf(input.runId).length === 2);
    await handle.signal(PAUSE_SIGNAL);
    await handle.signal<[TasksAdded]>(TASKS_ADDED_SIGNAL, { sliceCount: 4, total: 4 * TASKS_PER_SLICE, lastBatch: true });
    const events = await afterSignals(workflowId);
    const firstSignal = events.findIndex((event) => event.workflowExecutionSignaledEventAttributes);
    expect(events.slice(firstSignal).filter((event) => event.activityTaskScheduledEventAttributes), 'no slice is scheduled while the run is paused').to.have.length(0);
    expect(slicesOf(input.runId)).to.deep.equal([0, 1]);

    await handle.signal(RESUME_SIGNAL);
    await handle.result();
    expect(slicesOf(input.runId)).to.deep.equal([0, 1, 2, 3]);
    expect(endOf(input.runId)).to.deep.include({ status: 'completed' });
    expect(endOf(input.runId)?.stats).to.deep.include({ total: 40, completed: 40, successful: 40 });
    const delivery = await mocked.client.workflow.getHandle(webhookWorkflowId(`ev-${input.runId}`)).result();
    expect(delivery).to.deep.equal({ delivered: true, attempts: 1 });
    expect(mocked.calls.deliverWebhook).to.deep.include([`key-${input.runId}`]);
    await capture(workflowId, 'mocked-run-paused');
    await capture(webhookWorkflowId(`ev-${input.runId}`), 'mocked-webhook-delivered');
  });

  /** Starts a run whose slice 0 is held, pauses it, lets slice 0 return paused, and waits until the run has taken that in. */
  async function pausedAtSlice(suffix: string) {
    const input = runInput({ runId: `r_${suffix}_${Date.now().toString(36)}_slicepause` });
    held.set(`${input.runId}/0`, gate());
    const workflowId = batchRunWorkflowId(input.runId);
    const handle = await mocked.client.workflow.start(BATCH_RUN_WORKFLOW_TYPE, { taskQueue: mocked.taskQueue, workflowId, args: [input] });
    await until('slice 0 in flight', () => sliceInputsOf(input.runId).length === 1);
    await handle.signal(PAUSE_SIGNAL);
    await afterSignals(workflowId);
    held.get(`${input.runId}/0`)?.open(undefined);
    await until('the paused slice taken in', async () => {
      const events = (await handle.fetchHistory()).events ?? [];
      const completed = events.findIndex((event) => event.activityTaskCompletedEventAttributes);
      return completed >= 0 && events.slice(completed).some((event) => event.workflowTaskCompletedEventAttributes);
    });
    return { input, workflowId, handle };
  }

  it('ends a paused slice\'s activity at once and schedules its next part when the run resumes, the slice counted once', async () => {
    const { input, workflowId, handle } = await pausedAtSlice('resumed');
    expect(sliceInputsOf(input.runId)[0]).to.deep.include({ n: 0, pausable: true });
    const description = await handle.describe();
    expect(description.raw.pendingActivities ?? [], 'no slice activity waits while the run is paused').to.have.length(0);
    expect(description.status.name).to.equal('RUNNING');

    await handle.signal(RESUME_SIGNAL);
    await handle.result();
    const slices = sliceInputsOf(input.runId).map((slice) => ({ n: slice.n, part: slice.part ?? 0, closing: slice.closing ?? false }));
    expect(slices).to.deep.equal([
      { n: 0, part: 0, closing: false },
      { n: 0, part: 1, closing: false },
      { n: 1, part: 0, closing: false },
    ]);
    expect(endOf(input.runId)).to.deep.include({ status: 'completed' });
    // The paused part's counts are not the slice's: only the part that ends it is counted.
    expect(endOf(input.runId)?.stats).to.deep.include({ total: 20, completed: 20, successful: 20 });
    await capture(workflowId, 'mocked-run-slice-paused');
  });

  it('closes a paused slice when its run is stopped: its next part starts no task, no other slice starts', async () => {
    const { input, workflowId, handle } = await pausedAtSlice('stopped');
    await handle.signal(STOP_SIGNAL, 'stopped');
    await handle.result();
    const slices = sliceInputsOf(input.runId).map((slice) => ({ n: slice.n, part: slice.part ?? 0, closing: slice.closing ?? false }));
    expect(slices).to.deep.equal([
      { n: 0, part: 0, closing: false },
      { n: 0, part: 1, closing: true },
    ]);
    expect(endOf(input.runId)).to.deep.include({ status: 'stopped' });
    expect(endOf(input.runId)?.stats).to.deep.include({ total: 20, completed: 4, successful: 4 });
    await capture(workflowId, 'mocked-run-slice-closed');
  });

  it('hands a slice\'s heartbeat progress to its next attempt after a failed one', async () => {
    const input = runInput({ runId: `r_mocked_${Date.now().toString(36)}_progress` });
    const workflowId = batchRunWorkflowId(input.runId);
    await mocked.client.workflow.execute(BATCH_RUN_WORKFLOW_TYPE, { taskQueue: mocked.taskQueue, workflowId, args: [input] });
    expect(sliceInputsOf(input.runId).map((slice) => slice.n)).to.deep.equal([0, 0, 1]);
    expect(progressSeen.get(input.runId)).to.deep.equal({ part: 0, done: [[0, { status: 'successful' }], [1, { status: 'failed' }]] });
    expect(endOf(input.runId)).to.deep.include({ status: 'completed' });
    await capture(workflowId, 'mocked-run-slice-retried');
  });

  it('stops a run: slices in flight finish, no other starts, the run ends stopped', async () => {
    const input = runInput({ sliceCount: 6, total: 6 * TASKS_PER_SLICE, slicesInFlight: 2 });
    for (const n of [0, 1]) held.set(`${input.runId}/${n}`, gate());
    const workflowId = batchRunWorkflowId(input.runId);
    const handle = await mocked.client.workflow.start(BATCH_RUN_WORKFLOW_TYPE, { taskQueue: mocked.taskQueue, workflowId, args: [input] });
    await until('two slices in flight', () => slicesOf(input.runId).length === 2);
    await handle.signal(STOP_SIGNAL, 'stopped');
    await afterSignals(workflowId);
    for (const n of [0, 1]) held.get(`${input.runId}/${n}`)?.open(undefined);
    await handle.result();
    expect(slicesOf(input.runId).sort()).to.deep.equal([0, 1]);
    expect(endOf(input.runId)).to.deep.include({ status: 'stopped' });
    expect(endOf(input.runId)?.stats).to.deep.include({ total: 60, completed: 20 });
    await capture(workflowId, 'mocked-run-stopped');
  });

  it('continues a long run as new at its history bound, every slice run once and counted', async () => {
    const input = runInput({ sliceCount: 12, total: 12 * TASKS_PER_SLICE, historyLimit: 40 });
    const workflowId = batchRunWorkflowId(input.runId);
    const handle = await mocked.client.workflow.start(BATCH_RUN_WORKFLOW_TYPE, { taskQueue: mocked.taskQueue, workflowId, args: [input] });
    await handle.result();
    const first = await mocked.client.workflow.getHandle(workflowId, handle.firstExecutionRunId).describe();
    expect(first.status.name).to.equal('CONTINUED_AS_NEW');
    expect(slicesOf(input.runId)).to.deep.equal([...Array(12).keys()]);
    expect(endOf(input.runId)?.stats).to.deep.include({ total: 120, completed: 120, successful: 120 });
    await capture(workflowId, 'mocked-run-continued');
    expect(captured.filter((item) => item.workflowId.startsWith('mocked-run-continued-')).length).to.be.at.least(2);
  });

  it('records a fire the account cannot run as ended and delivers its webhook; a skipped fire starts nothing; a fire that runs waits for its run', async () => {
    const refusedJob = `j_refused_${Date.now().toString(36)}`;
    await mocked.client.workflow.execute(SCHEDULED_FIRE_WORKFLOW_TYPE, { taskQueue: mocked.taskQueue, workflowId: `fire-${refusedJob}`, args: [{ jobId: refusedJob }] });
    const delivery = await mocked.client.workflow.getHandle(webhookWorkflowId(`ev-${refusedJob}`)).result();
    expect(delivery).to.deep.equal({ delivered: true, attempts: 1 });
    await capture(`fire-${refusedJob}`, 'mocked-fire-refused');

    const skippedJob = `j_skipped_${Date.now().toString(36)}`;
    const before = mocked.calls.deliverWebhook?.length ?? 0;
    await mocked.client.workflow.execute(SCHEDULED_FIRE_WORKFLOW_TYPE, { taskQueue: mocked.taskQueue, workflowId: `fire-${skippedJob}`, args: [{ jobId: skippedJob }] });
    const skipped = (await mocked.client.workflow.getHandle(`fire-${skippedJob}`).fetchHistory()).events ?? [];
    expect(skipped.filter((event) => event.startChildWorkflowExecutionInitiatedEventAttributes)).to.have.length(0);
    expect(mocked.calls.deliverWebhook?.length ?? 0).to.equal(before);
    await capture(`fire-${skippedJob}`, 'mocked-fire-skipped');

    const runJob = `j_run_${Date.now().toString(36)}`;
    await mocked.client.workflow.execute(SCHEDULED_FIRE_WORKFLOW_TYPE, { taskQueue: mocked.taskQueue, workflowId: `fire-${runJob}`, args: [{ jobId: runJob }] });
    const ended = (mocked.calls.batchRunEnd ?? []).map(([input]) => input as RunEndInput).filter((input) => input.runId.startsWith('r_mocked_') && slicesOf(input.runId).length > 0);
    expect(ended.some((end) => end.status === 'completed'), 'the fired run ended before its fire').to.equal(true);
    await capture(`fire-${runJob}`, 'mocked-fire-run');
  });

  it('gives a webhook delivery up once its retry window has passed, and at once on a failure no attempt can mend', async () => {
    deliveries = 'refuse';
    const key = `key-refused-${Date.now().toString(36)}`;
    const workflowId = webhookWorkflowId(`ev-refused-${Date.now().toString(36)}`);
    const result = await mocked.client.workflow.execute(WEBHOOK_WORKFLOW_TYPE, { taskQueue: mocked.taskQueue, workflowId, args: [{ key, retry: RETRY }] });
    const attempts = mocked.calls.deliverWebhook?.filter(([called]) => called === key).length ?? 0;
    expect(attempts, 'attempts within the window').to.be.at.least(2);
    expect(result).to.deep.equal({ delivered: false, attempts });
    expect(mocked.calls.recordWebhookGaveUp?.filter(([called]) => called === key)).to.have.length(1);
    await capture(workflowId, 'mocked-webhook-gave-up');

    deliveries = 'gone';
    const goneKey = `key-gone-${Date.now().toString(36)}`;
    const gone = await mocked.client.workflow.execute(WEBHOOK_WORKFLOW_TYPE, { taskQueue: mocked.taskQueue, workflowId: webhookWorkflowId(`ev-gone-${Date.now().toString(36)}`), args: [{ key: goneKey, retry: { ...RETRY, totalMs: 60_000 } }] });
    expect(gone).to.deep.equal({ delivered: false, attempts: 1 });
    deliveries = 'deliver';
  });

  it('ends preparations ready, ready on a second attempt, exhausted, unpreparable and failed at discovery', async () => {
    const expected: Record<string, { status: string; code?: string; samples: number }> = {
      'ready.test': { status: 'ready', samples: 1 },
      'second.test': { status: 'ready', samples: 2 },
      'exhausted.test': { status: 'failed', code: 'preparation_exhausted', samples: 2 },
      'unusable.test': { status: 'failed', code: 'unpreparable', samples: 1 },
      'nodiscovery.test': { status: 'failed', code: 'discovery_failed', samples: 0 },
    };
    for (const [domain, outcome] of Object.entries(expected)) {
      const workflowId = `prepare-${domain}-${Date.now().toString(36)}`;
      const result = await mocked.client.workflow.execute(PREPARE_WORKFLOW_TYPE, {
        taskQueue: mocked.taskQueue,
        workflowId,
        args: [{ domain, exampleUrls: domain === 'ready.test' ? [`https://${domain}/p/1`] : [] }],
      });
      expect(result, domain).to.deep.equal({ status: outcome.status });
      const finish = (mocked.calls.extractFinish ?? []).map(([input]) => input as { domain: string; failure?: { code: string } }).filter((input) => input.domain === domain);
      expect(finish, domain).to.have.length(1);
      expect(finish[0]?.failure?.code, domain).to.equal(outcome.code);
      expect((mocked.calls.extractSample ?? []).filter(([called]) => called === domain), domain).to.have.length(outcome.samples);
      await capture(workflowId, `mocked-prepare-${domain.replace('.test', '')}`);
    }
    expect(verifyAttempts.get('second.test'), 'verified twice: the second attempt passed').to.equal(2);
  });

  it('runs the one-activity workflows: self-check, retention, reconciler, export', async () => {
    const stamp = Date.now().toString(36);
    for (const [type, id, args] of [
      [SELF_CHECK_WORKFLOW_TYPE, `selfcheck-${stamp}`, [{ token: stamp }]],
      [RETENTION_WORKFLOW_TYPE, `retention-${stamp}`, []],
      [RECONCILE_WORKFLOW_TYPE, `reconcile-${stamp}`, []],
      [BATCH_EXPORT_WORKFLOW_TYPE, `export-${stamp}`, [`x_${stamp}`]],
    ] as const) {
      await mocked.client.workflow.execute(type, { taskQueue: mocked.taskQueue, workflowId: id, args: [...args] });
      await capture(id, `mocked-${id.split('-')[0]}`);
    }
    expect(mocked.calls.batchExport).to.deep.include([`x_${stamp}`]);
  });

  it('replays every history it captured with the workflow code of this tree', async () => {
    expect(captured.length).to.be.at.least(15);
    expect(await replayFailures(captured)).to.deep.equal([]);
  });
});
