import { expect } from 'chai';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Calendar, Daily, Rate, ZenRowsBatchClient } from 'zenrows';
import { startWebhookReceiver, type WebhookReceiver } from '../fixtures/webhook-receiver';
import { pythonWithClient } from '../helpers/python-clients';
import { eventually, testStack } from '../helpers/stack';
import { batchAccount, startTargetSite, type Json } from './helpers';

/** Runs the client script with `args`, or `inline.code` with `inline.stdin` on its standard input. */
function runPython(python: string, args: string[], inline?: { code: string; stdin: string }): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const argv = inline ? ['-c', inline.code] : [path.join(__dirname, 'clients', 'python_batch.py'), ...args];
    const child = spawn(python, argv, { stdio: 'pipe' });
    child.stdin.end(inline?.stdin ?? '');
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

describe('Batch through the official clients (base URL changed only)', () => {
  let site: Awaited<ReturnType<typeof startTargetSite>>;
  let receiver: WebhookReceiver;
  before(async () => {
    site = await startTargetSite();
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await site.close();
    await receiver.close();
  });

  it('serves every Batch call of the Python client 1.11.0', async function () {
    this.timeout(300_000);
    const python = pythonWithClient();
    const account = await batchAccount();
    const { status, stdout, stderr } = await runPython(python, [testStack().urls.api, account.key, site.url, receiver.url()]);
    expect(status, stderr).to.equal(0);
    const out = JSON.parse(stdout) as Json;
    expect(out.submit).to.include({ accepted: 14, status: 'closed' });
    expect(out.idempotent_same_job).to.equal(true);
    expect(out.run).to.deep.equal({ status: 'completed', total: 14, successful: 13, failed: 1, credits: 13 });
    expect(out.job).to.deep.equal({ name: 'python client', type: 'regular', status: 'closed', format: 'markdown', params: { response_type: 'markdown' } });
    expect(out.results).to.equal(14);
    expect(out.successful_rows).to.equal(13);
    expect(out.body_is_markdown).to.equal(true);
    expect(out.tagged).to.deep.equal({ metadata: { k: 'v' }, type: 'markdown' });
    expect(out.failed_codes).to.deep.equal(['RESP002']);
    expect(out.history_attempts).to.equal(1);
    expect(out.runs).to.deep.equal([1]);
    expect(out.listed).to.equal(true);
    expect(out.downloaded_files).to.equal(13);
    expect(out.export_lines).to.equal(14);
    expect(out.retry_run_sequence).to.equal(2);
    expect(out.retry_status).to.be.oneOf(['running', 'pending', 'completed']);
    expect(out.added).to.deep.equal({ accepted: 2, job_status: 'open' });
    expect(out.closed).to.equal('closed');
    // Each refusal the calls provoke answers the code the client's BatchErrorCode names.
    expect(out.late_add).to.deep.equal([409, 'last_batch_received']);
    expect(out.open_run).to.equal(4);
    expect(out.retry_nothing).to.deep.equal([409, 'no_matching_tasks']);
    expect(out.stop_ended).to.deep.equal([409, 'run_not_stoppable']);
    expect(out.rerun_in_flight).to.deep.equal([409, 'run_not_terminal']);
    expect(out.stop_answer).to.equal('stopped');
    expect(out.webhook_put).to.equal(false);
    expect(out.webhook_get).to.equal(receiver.url());
    expect(out.http_webhook).to.equal('callback_url_must_be_https');
    expect(out.webhook_after_delete).to.equal(404);
    expect(out.bad_param).to.deep.equal([400, 'invalid_argument']);
    expect(out.csv_accepted).to.equal(2);
    expect(out.after_delete).to.equal('not_found');
    expect(out.paused).to.deep.equal(['paused', 'active']);
    expect(out.stopped).to.equal('stopped');
    expect(out.run_after_delete).to.equal(404);
    expect(out.scheduled).to.deep.equal({ type: 'scheduled', state: 'active', rate: 1, has_next: true, has_run: false });
    expect(out.schedule_paused).to.equal('paused');
    expect(out.schedule_updated).to.deep.equal(['09:00', 'Europe/Berlin']);
    expect(out.schedule_resumed).to.equal('active');
    expect(out.manual_fire).to.deep.equal(['manual', 'completed']);
    expect(out.listed_scheduled).to.equal(true);
    expect(out.hmac).to.deep.equal({ distinct: 3, secret_bytes: 32 });
    expect(out.hmac_listed).to.deep.equal({ active: true, candidate: null });
    expect(out.test_webhook).to.deep.equal([true, 200]);

    // What arrived verifies with the client's own helper, unchanged: the test event and a run's end.
    await eventually(async () => receiver.deliveries.some((delivery) => delivery.path === '/signed'), 100, 200);
    const signed = receiver.deliveries.filter((delivery) => delivery.headers['x-signature'] !== undefined);
    expect(signed.map((delivery) => (JSON.parse(delivery.body.toString()) as Json).event_type)).to.include.members(['webhook.test', 'run.completed']);
    for (const delivery of signed) {
      const verified = await runPython(python, [], {
        code: 'import json,sys,base64; from zenrows.batch import verify_webhook_signature as v; a=json.load(sys.stdin); print(json.dumps([v(base64.b64decode(a["body"]), a["header"], a["secrets"]), v(base64.b64decode(a["body"]) + b" ", a["header"], a["secrets"])]))',
        stdin: JSON.stringify({ body: delivery.body.toString('base64'), header: delivery.headers['x-signature'], secrets: out.secrets }),
      });
      expect(JSON.parse(verified.stdout), verified.stderr).to.deep.equal([true, false]);
    }
  });

  it('serves every Batch call of the Node client 2.0.3', async () => {
    const account = await batchAccount();
    const client = new ZenRowsBatchClient(account.key, { baseURL: `${testStack().urls.api}/v1`, retries: 2 });
    const ref = await client.submitJob({ type: 'regular', status: 'closed', tasks: [{ url: `${site.url}ok/1` }, { url: `${site.url}ok/2` }, { url: `${site.url}missing/1` }], idempotencyKey: 'node-1' });
    const run = await ref.run.wait({ timeout: 90, pollInterval: 0.2 });
    expect(run.status).to.equal('completed');
    expect(run.stats).to.deep.include({ total: 3, successful: 2, failed: 1 });
    const rows = [];
    for await (const row of client.iterResults(ref.jobId)) rows.push(row);
    expect(rows).to.have.length(3);
    const content = await client.getTaskContent(ref.jobId, rows[0]!.task_id);
    expect(content).to.contain('Page /ok/1');
    const history = await client.getTaskHistory(ref.jobId, rows[2]!.task_id);
    expect(history.events[0]!.error!.code).to.equal('RESP002');
    const memory = await client.downloadTaskToMemory(rows[0]!);
    expect(Buffer.from(memory).toString()).to.contain('Page /ok/1');
    const jobs = await client.listJobs({ limit: 1 });
    expect(jobs.jobs[0]!.job_id).to.equal(ref.jobId);
    const runs = await client.listRuns(ref.jobId);
    expect(runs.runs).to.have.length(1);
    const open = await client.submitJob({ type: 'regular', status: 'open', tasks: [{ url: `${site.url}ok/3` }] });
    const added = await open.addTasks([{ url: `${site.url}ok/4` }]);
    expect(added.accepted_tasks).to.equal(1);
    const closed = await open.close();
    expect(closed.data.status).to.equal('closed');
    expect(await open.addTasks([{ url: `${site.url}ok/5` }]).then(() => 'accepted', (caught: unknown) => [(caught as { status: number }).status, (caught as { code: string }).code]), 'add after the last batch').to.deep.equal([409, 'last_batch_received']);
    expect((await open.run.wait({ timeout: 90, pollInterval: 0.2 })).status).to.equal('completed');
    expect(await open.retryFailed().then(() => 'accepted', (caught: unknown) => [(caught as { status: number }).status, (caught as { code: string }).code]), 'a partial rerun matching nothing').to.deep.equal([409, 'no_matching_tasks']);
    const webhook = await client.putJobWebhook(open.jobId, { url: receiver.url() });
    expect(webhook).to.deep.equal({ url: receiver.url(), signature: false });
    const test = await client.testWebhook({ url: receiver.url() });
    expect(test.delivered).to.equal(true);
    const keys = await client.listHmacKeys();
    expect(keys).to.be.an('object');
    const exportRef = await client.startResultsExport(ref.jobId, run.runId);
    const done = await client.waitForExport(ref.jobId, run.runId, exportRef.exportId, { timeout: 60, pollInterval: 0.2 });
    expect(done.status).to.equal('completed');
    await client.deleteJobWebhook(open.jobId);
    await open.delete();
    const error = await client.getJob(open.jobId).catch((caught: unknown) => caught as { status: number; code?: string });
    expect((error as { status: number }).status).to.equal(404);

    // The current run's controls, a retry of the failed task, and a run deleted.
    const slow = await client.submitRegular(Array.from({ length: 40 }, (_, index) => `${site.url}slow/${index + 100}`));
    expect((await slow.run.pause()).data.pause_state).to.equal('paused');
    expect((await slow.run.resume()).data.pause_state).to.equal('active');
    const refusal = (caught: unknown) => [(caught as { status: number }).status, (caught as { code: string }).code];
    expect(await slow.rerun().then(() => 'accepted', refusal), 'rerun while in flight').to.deep.equal([409, 'run_not_terminal']);
    expect((await slow.run.stop()).data.status, 'stopped at once').to.equal('stopped');
    const stopped = await slow.run.wait({ timeout: 90, pollInterval: 0.2 });
    expect(stopped.status).to.equal('stopped');
    expect(await slow.run.stop().then(() => 'accepted', refusal), 'stop of a stopped run').to.deep.equal([409, 'run_not_stoppable']);
    const retried = await ref.retryFailed();
    expect((await client.getRun(ref.jobId, retried.runId)).data.run_sequence).to.equal(2);
    expect((await client.waitForRun(ref.jobId, { timeout: 90, pollInterval: 0.2 })).stats).to.deep.include({ total: 3, successful: 2 });
    await client.run(ref.jobId, retried.runId).delete();
    const gone = await client.getRun(ref.jobId, retried.runId).catch((caught: unknown) => caught as { status: number });
    expect((gone as { status: number }).status).to.equal(404);

    // A scheduled job, fired by hand, its schedule paused, changed and resumed.
    const scheduled = await client.submitScheduled(new Rate(1, 'hour'), [`${site.url}ok/600`]);
    expect((await scheduled.load()).data).to.deep.include({ type: 'scheduled', schedule_state: 'active', latest_run: null });
    expect((await scheduled.schedule.pause()).data.schedule_state).to.equal('paused');
    const changed = await scheduled.schedule.update(new Calendar(['09:00'], new Daily(), 'UTC'));
    expect(changed.data.schedule).to.deep.equal({ calendar: { times_of_day: ['09:00'], cadence: { daily: {} } }, timezone: 'UTC' });
    expect((await scheduled.schedule.resume()).data.schedule_state).to.equal('active');
    const fired = await scheduled.rerun();
    expect((fired.data as unknown as { trigger: string }).trigger).to.equal('manual');
    expect((await client.listJobs({ type: 'scheduled' })).jobs.map((job) => job.job_id)).to.deep.equal([scheduled.jobId]);
    await scheduled.delete();

    // Signing keys: create, stage, cancel, stage, finalize; and a CSV input.
    const active = await client.rotateHmacKey();
    await client.rotateHmacKey();
    await client.cancelHmacRotation();
    const next = await client.rotateHmacKey();
    await client.finalizeHmacKey();
    const listed = await client.listHmacKeys();
    expect(listed.active?.kid).to.equal(next.kid);
    expect(Buffer.from(active.secret, 'base64')).to.have.length(32);
    const input = await client.uploadCsv(`${site.url}ok/700\n${site.url}ok/701\n`, { fields: { url: 0 } });
    const fromCsv = await client.submitRegular(undefined, input);
    expect(fromCsv.acceptedTasks).to.equal(2);
  });
});
