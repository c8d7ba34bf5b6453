/**
 * Limits hold across processes and workers: with two API processes (API_PROCESSES=2) beside the stack's
 * own and a second worker, what an account holds (MCP sessions, scheduled jobs, active jobs) stays
 * within its plan under concurrent creations spread over the processes, the request budget is the
 * account's whatever the number of processes, and a Batch run never has more requests in flight at its
 * target than its plan's concurrency, whichever workers run its slices.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Agent, request } from 'undici';
import { API_PROCESS_GROUP } from '../../core/accounts/api-processes';
import { WORKER_HEARTBEATS, type HeartbeatRecord } from '../../core/liveness';
import { ManagedProcess } from '../../scripts/stack/process';
import { batchRunWorkflowId } from '../../core/jobs/workflow-names';
import { connectTemporal, type TemporalHandle } from '../../base/temporal';
import { newAccount, openAccounts, serviceConfig, type AccountsHandle, type TestAccount } from '../helpers/app';
import { startFixtureServer, type FixtureServer } from '../helpers/fixtures';
import { freePort } from '../helpers/ports';
import { startExtraWorker, type ExtraWorker } from '../helpers/second-worker';
import { testStack } from '../helpers/stack';

const CAP = 3;
const CREATIONS = 40;
const HOUR = { rate: { every: 1, unit: 'hour' } };

/** One request on a connection of its own, so that the API processes share the requests. */
async function call(base: string, method: string, target: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; text: string; headers: Record<string, unknown> }> {
  const dispatcher = new Agent({ pipelining: 0 });
  try {
    const response = await request(`${base}${target}`, {
      method: method as 'GET',
      dispatcher,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.statusCode, text: await response.body.text(), headers: response.headers };
  } finally {
    await dispatcher.close();
  }
}

const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'limits', version: '1' } } };
const count = (statuses: number[], status: number): number => statuses.filter((each) => each === status).length;

describe('limits across API processes and workers', function () {
  this.timeout(300_000);
  let folder: string;
  let api: ManagedProcess;
  let base: string;
  let handle: AccountsHandle;
  let temporal: TemporalHandle;
  let worker: ExtraWorker | undefined;
  let target: FixtureServer;
  let inFlight = 0;
  let mostInFlight = 0;
  /** Requests at the target are held until this opens (the active-job case keeps its runs running). */
  let hold: Promise<void> = Promise.resolve();
  let release: () => void = () => undefined;

  /** A new account whose key every API process has cached, so that its creations all start at once. */
  const account = async (): Promise<TestAccount> => {
    const made = await newAccount(handle.accounts, { credits: 1_000_000 });
    await Promise.all(Array.from({ length: 8 }, () => call(base, 'GET', '/v1/jobs', { 'x-api-key': made.key })));
    return made;
  };

  before(async () => {
    handle = await openAccounts();
    temporal = connectTemporal(serviceConfig());
    target = await startFixtureServer(async (req, res) => {
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      try {
        if (req.url?.startsWith('/held/')) await hold;
        else await new Promise((resolve) => setTimeout(resolve, 40));
        res.setHeader('content-type', 'text/html; charset=utf-8');
        res.end(`<html><body><p>${req.url}</p></body></html>`);
      } finally {
        inFlight--;
      }
    });
    folder = mkdtempSync(path.join(os.tmpdir(), 'fetchplane-limits-'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const stackApi = testStack().component('api').spec;
    api = new ManagedProcess({
      ...stackApi,
      name: 'api-limits',
      // Small holdings, so that a process counting on its own would show at once.
      env: {
        ...stackApi.env,
        PORT: String(port),
        API_PROCESSES: '2',
        ACCOUNT_LIMITS: `mcp_sessions=${CAP},scheduled_jobs=${CAP},stored_inputs=20,stored_input_bytes=200mb,concurrent_exports=3,requests_per_second=200,request_burst=400,requests_in_flight=200`,
        ACTIVE_JOBS_LIMIT: String(CAP),
      },
      logDir: folder,
      runDir: folder,
    });
    await api.start();
    worker = await startExtraWorker(testStack(), 'worker-limits');
    // Every API process knows the others: each record moved on twice after all three were there.
    const records = handle.db.db.collection<HeartbeatRecord>(WORKER_HEARTBEATS);
    const beats = async () => new Map((await records.find({ task_queue: API_PROCESS_GROUP }).toArray()).map((record) => [record._id, record.beat]));
    let first = await beats();
    for (let attempt = 0; attempt < 100 && first.size < 3; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      first = await beats();
    }
    expect(first.size, 'API processes recorded').to.be.at.least(3);
    for (let attempt = 0; attempt < 100; attempt++) {
      const now = await beats();
      if ([...first].every(([id, beat]) => (now.get(id) ?? 0) >= beat + 2)) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });

  after(async () => {
    release();
    await worker?.stop();
    await api?.stop();
    await target?.close();
    await handle?.close();
    await temporal?.close();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  it('keeps MCP sessions within the plan under 40 concurrent opens spread over the processes', async () => {
    for (let trial = 0; trial < 3; trial++) {
      const owner = await account();
      const headers = { authorization: `Bearer ${owner.key}`, accept: 'application/json, text/event-stream' };
      const statuses = await Promise.all(Array.from({ length: CREATIONS }, () => call(base, 'POST', '/mcp', headers, initialize).then((answer) => answer.status)));
      expect(count(statuses, 200), statuses.join(',')).to.equal(CAP);
      expect(count(statuses, 429), statuses.join(',')).to.equal(CREATIONS - CAP);
      expect(await handle.db.db.collection('mcp_sessions').countDocuments({ account_id: owner.accountId })).to.equal(CAP);
    }
  });

  it('keeps scheduled jobs within the plan under 40 concurrent creations spread over the processes', async () => {
    for (let trial = 0; trial < 3; trial++) {
      const owner = await account();
      const job = { type: 'scheduled', schedule: HOUR, tasks: [{ url: `${target.url}ok/1` }] };
      const statuses = await Promise.all(Array.from({ length: CREATIONS }, () => call(base, 'POST', '/v1/jobs', { 'x-api-key': owner.key }, job).then((answer) => answer.status)));
      expect(count(statuses, 201), statuses.join(',')).to.equal(CAP);
      expect(count(statuses, 429), statuses.join(',')).to.equal(CREATIONS - CAP);
      expect(await handle.db.db.collection('batch_jobs').countDocuments({ account_id: owner.accountId, type: 'scheduled', status: { $ne: 'deleted' } })).to.equal(CAP);
    }
  });

  it('keeps active jobs within the plan under 40 concurrent starts spread over the processes', async () => {
    const owner = await account();
    hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    const job = (n: number) => ({ tasks: [{ url: `${target.url}held/${n}` }] });
    const statuses = await Promise.all(Array.from({ length: CREATIONS }, (_, n) => call(base, 'POST', '/v1/jobs', { 'x-api-key': owner.key }, job(n)).then((answer) => answer.status)));
    release();
    expect(count(statuses, 201), statuses.join(',')).to.equal(CAP);
    expect(count(statuses, 429), statuses.join(',')).to.equal(CREATIONS - CAP);
  });

  it('holds the request budget across the processes: an account cannot pass it once per process', async () => {
    // A burst of 12 that refills one request in 1,000 s: whatever the machine's speed, nothing more comes.
    const made = await handle.accounts.store.createAccount({ plan: 'free', overrides: { credits: 1_000_000, requestsPerSecond: 0.001, requestBurst: 12 } });
    const { key } = await handle.accounts.store.createKey(made._id, {});
    const statuses: number[] = [];
    for (let round = 0; round < 4; round++) {
      statuses.push(...(await Promise.all(Array.from({ length: 15 }, () => call(base, 'GET', '/v1/jobs', { 'x-api-key': key }).then((answer) => answer.status)))));
    }
    expect(count(statuses, 200), statuses.join(',')).to.be.within(1, 12);
    expect(count(statuses, 200) + count(statuses, 429), statuses.join(',')).to.equal(statuses.length);
  });

  it('never has more of a run’s requests in flight at its target than its plan’s concurrency, with two workers', async () => {
    const concurrency = 4;
    const owner = await newAccount(handle.accounts, { credits: 1_000_000, concurrency });
    const tasks = Array.from({ length: 1_500 }, (_, n) => ({ url: `${target.url}page/${n}` }));
    // Which worker takes a slice is the task queue's choice; a run whose slices all went to one worker
    // shows nothing across workers, so another run follows (at most three), each checked in full.
    const workers = new Set<string>();
    for (let trial = 0; trial < 3 && workers.size < 2; trial++) {
      mostInFlight = 0;
      const created = await call(base, 'POST', '/v1/jobs', { 'x-api-key': owner.key }, { tasks });
      expect(created.status, created.text).to.equal(201);
      const jobId = (JSON.parse(created.text) as { job_id: string }).job_id;
      type Run = { run_id?: string; status?: string; stats?: { successful?: number } } | null;
      let run: Run = null;
      for (let attempt = 0; attempt < 600; attempt++) {
        const answer = await call(base, 'GET', `/v1/jobs/${jobId}`, { 'x-api-key': owner.key });
        run = (JSON.parse(answer.text) as { latest_run: Run }).latest_run;
        if (run && ['completed', 'failed', 'stopped'].includes(run.status ?? '')) break;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(run?.status).to.equal('completed');
      expect(run?.stats?.successful).to.equal(tasks.length);
      expect(mostInFlight, 'requests in flight at the target at once').to.be.within(1, concurrency);
      // The workers that ran slices of the run (from its history).
      const history = await temporal.client.workflow.getHandle(batchRunWorkflowId(run?.run_id ?? '')).fetchHistory();
      const slices = new Set<string>();
      workers.clear();
      for (const event of history.events ?? []) {
        if (event.activityTaskScheduledEventAttributes?.activityType?.name === 'batchSlice') slices.add(String(event.eventId));
        const started = event.activityTaskStartedEventAttributes;
        if (started && slices.has(String(started.scheduledEventId))) workers.add(started.identity ?? '');
      }
    }
    expect([...workers], 'workers that ran slices').to.include(worker?.identity ?? 'the second worker');
    expect(workers.size).to.equal(2);
  });
});
