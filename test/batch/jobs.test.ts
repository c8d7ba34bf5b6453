import { expect } from 'chai';
import { allResults, batchAccount, batchRequest, batchStore, creditsUsed, startTargetSite, urls, waitForRun, waitForRunEnd, type Json } from './helpers';
import { eventually } from '../helpers/stack';

describe('Batch jobs', () => {
  let site: Awaited<ReturnType<typeof startTargetSite>>;
  before(async () => {
    site = await startTargetSite({ slowMs: 400 });
  });
  after(async () => {
    await site.close();
  });

  it('runs a closed job to completion: one result per task, exact stats, each success billed once', async () => {
    const account = await batchAccount();
    const tasks = [...urls(site, 'ok', 230), ...urls(site, 'missing', 20), ...urls(site, 'flaky', 5)];
    const created = await batchRequest(account.key, 'POST', '/v1/jobs', { type: 'regular', status: 'closed', tasks });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body).to.include({ status: 'closed', accepted_tasks: 255 });
    expect(created.body.job_id).to.match(/^job_/);
    expect(created.body.latest_run.run_sequence).to.equal(1);
    expect(created.body.latest_run.trigger).to.equal('manual');

    const run = await waitForRun(account.key, created.body.job_id as string);
    expect(run.status).to.equal('completed');
    expect(run.stats).to.deep.include({ total: 255, completed: 255, successful: 235, failed: 20 });
    expect(run.stats.failure_reasons).to.deep.equal({ not_found: 20 });
    expect(run.stats.spend.credits).to.equal(235);
    expect(await creditsUsed(account.accountId)).to.equal(235);
    for (let index = 0; index < 5; index++) expect(site.hits.get(`/flaky/${index}`)).to.equal(2);

    const rows = await allResults(account.key, `/v1/jobs/${created.body.job_id as string}/results`);
    expect(rows).to.have.length(255);
    expect(new Set(rows.map((row) => row.task_id)).size).to.equal(255);
    expect(rows.map((row) => row.url)).to.deep.equal(tasks.map((task) => task.url));
    const failed = rows.filter((row) => row.status === 'failed');
    expect(failed).to.have.length(20);
    expect(failed[0]!.error).to.include({ code: 'RESP002', status: 404 });
    expect(failed[0]!.error.type).to.match(/api-error-codes#RESP002$/);
    expect(failed[0]!.result_url).to.equal(undefined);
    const ok = rows.find((row) => row.url.endsWith('/ok/7'))!;
    expect(ok).to.include({ status: 'successful', type: 'html', method: 'GET' });
    expect(ok.spend.total).to.deep.equal({ credits: 1, cost: 0 });

    // The result link is its own credential: no key, and it names one result only.
    const body = await fetch(ok.result_url as string);
    expect(body.status).to.equal(200);
    expect(body.headers.get('content-security-policy')).to.equal('sandbox');
    expect(await body.text()).to.contain('Page /ok/7');
    expect(ok.result_url).not.to.contain(account.key);
    const tampered = (ok.result_url as string).replace(/.$/, (last) => (last === 'A' ? 'B' : 'A'));
    expect((await fetch(tampered)).status).to.equal(404);

    const successful = await allResults(account.key, `/v1/jobs/${created.body.job_id as string}/results`, 'successful');
    expect(successful).to.have.length(235);
    const content = await fetch(`${site.url.replace(/\/$/, '')}`); // the site is up
    expect(content.status).to.equal(200);

    const job = created.body.job_id as string;
    const viaApi = await batchRequest(account.key, 'GET', `/v1/jobs/${job}/tasks/${ok.task_id as string}/history`);
    expect(viaApi.status).to.equal(200);
    expect(viaApi.body.events).to.have.length(1);
    const flaky = rows.find((row) => row.url.endsWith('/flaky/0'))!;
    const history = await batchRequest(account.key, 'GET', `/v1/jobs/${job}/runs/${run.run_id as string}/tasks/${flaky.task_id as string}/history`);
    expect(history.body.events).to.have.length(2);
    expect(history.body.events[0].error.code).to.equal('RESP001');
    expect(history.body.events[1].spend.credits).to.equal(1);
  });

  it('validates every task and parameter before storing anything', async () => {
    const account = await batchAccount();
    const store = await batchStore();
    const before = await store.jobs.countDocuments({ account_id: account.accountId });
    const badParam = await batchRequest(account.key, 'POST', '/v1/jobs', { zenrows_params: { wait: 99999999 }, tasks: urls(site, 'ok', 2) });
    expect(badParam.status).to.equal(400);
    expect(badParam.body.code).to.equal('invalid_argument');
    expect(badParam.body.detail).to.contain('wait');
    const unknown = await batchRequest(account.key, 'POST', '/v1/jobs', { zenrows_params: { js_rendr: true }, tasks: urls(site, 'ok', 2) });
    expect(unknown.status).to.equal(400);
    expect(unknown.body.detail).to.contain('js_rendr');
    const badTasks = await batchRequest(account.key, 'POST', '/v1/jobs', {
      tasks: [{ url: 'ftp://example.com/x' }, ...urls(site, 'ok', 1), { url: 'not a url' }, { url: `${site.url}x`, zenrows_params: { wait_for: '.a' } }],
    });
    expect(badTasks.status).to.equal(400);
    expect(badTasks.body.invalid_tasks).to.deep.equal([
      { index: 0, reason: 'unsupported_scheme', value: 'ftp://example.com/x' },
      { index: 2, reason: 'malformed_url', value: 'not a url' },
      { index: 3, reason: 'invalid_param_value', value: 'wait_for' },
    ]);
    const extraField = await batchRequest(account.key, 'POST', '/v1/jobs', { tasks: urls(site, 'ok', 1), colour: 'blue' });
    expect(extraField.status).to.equal(400);
    expect(extraField.body.code).to.equal('invalid_argument');
    const malformed = await fetch(`${(await import('../helpers/stack')).testStack().urls.api}/v1/jobs`, {
      method: 'POST',
      headers: { 'X-API-Key': account.key, 'Content-Type': 'application/json' },
      body: '{"tasks": [',
    });
    expect(malformed.status).to.equal(400);
    expect(await store.jobs.countDocuments({ account_id: account.accountId })).to.equal(before);
  });

  it('takes the key only in X-API-Key', async () => {
    const account = await batchAccount();
    const inQuery = await batchRequest(null, 'GET', `/v1/jobs?apikey=${account.key}`);
    expect(inQuery.status).to.equal(401);
    expect(inQuery.body.code).to.equal('unauthenticated');
    const none = await batchRequest(null, 'GET', '/v1/jobs');
    expect(none.status).to.equal(401);
    const wrong = await batchRequest('f'.repeat(40), 'GET', '/v1/jobs');
    expect(wrong.status).to.equal(401);
  });

  it('grows an open job in calls, closes it with last_batch, then refuses more with 409', async () => {
    const account = await batchAccount();
    const created = await batchRequest(account.key, 'POST', '/v1/jobs', { type: 'regular', status: 'open', tasks: urls(site, 'ok', 30) });
    expect(created.status).to.equal(201);
    expect(created.body.status).to.equal('open');
    const job = created.body.job_id as string;
    const first = await batchRequest(account.key, 'POST', `/v1/jobs/${job}/tasks`, { tasks: urls(site, 'ok', 150, 30), last_batch: false });
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect(first.body).to.include({ accepted_tasks: 150, job_status: 'open' });
    expect(first.body.latest_run.last_batch_received).to.equal(false);
    const last = await batchRequest(account.key, 'POST', `/v1/jobs/${job}/tasks`, { tasks: urls(site, 'ok', 20, 180), last_batch: true });
    expect(last.body).to.include({ accepted_tasks: 20, job_status: 'closed' });
    expect(last.body.latest_run.last_batch_received).to.equal(true);
    const late = await batchRequest(account.key, 'POST', `/v1/jobs/${job}/tasks`, { tasks: urls(site, 'ok', 1, 500) });
    expect(late.status).to.equal(409);
    expect(late.body.code).to.equal('last_batch_received');
    const run = await waitForRun(account.key, job);
    expect(run.status).to.equal('completed');
    expect(run.stats).to.deep.include({ total: 200, completed: 200, successful: 200 });
    const rows = await allResults(account.key, `/v1/jobs/${job}/results`);
    expect(rows.map((row) => row.url)).to.deep.equal(urls(site, 'ok', 200).map((task) => task.url));
  });

  it('pauses, resumes and stops a run: stopped at once, no task starts after, stopped tasks stay pending and are not billed', async () => {
    const account = await batchAccount({ concurrency: 2 });
    const created = await batchRequest(account.key, 'POST', '/v1/jobs', { tasks: urls(site, 'slow', 60) });
    const job = created.body.job_id as string;
    const started = (): number => [...site.hits.keys()].filter((path) => /^\/slow\/\d{1,2}$/.test(path)).length;
    await site.requests.until(() => started() >= 2);
    const paused = await batchRequest(account.key, 'POST', `/v1/jobs/${job}/pause`);
    expect(paused.status).to.equal(200);
    // Paused is a flag beside the status, as the clients' Run model has it.
    expect(paused.body).to.include({ status: 'running', pause_state: 'paused' });
    // The tasks in flight finish...
    await site.requests.until(() => site.requests.inFlight === 0);
    const settled = started();
    expect(settled).to.be.lessThan(60);
    // ...then, while another run of the worker fetches six slow pages one after another, this run starts none.
    const clock = await batchAccount({ concurrency: 1 });
    const clockJob = await batchRequest(clock.key, 'POST', '/v1/jobs', { tasks: urls(site, 'slow', 6, 1000) });
    expect((await waitForRun(clock.key, clockJob.body.job_id as string)).status).to.equal('completed');
    expect(started(), 'no task starts while paused').to.equal(settled);
    expect((await batchRequest(account.key, 'GET', `/v1/jobs/${job}`)).body.latest_run).to.include({ status: 'running', pause_state: 'paused' });
    const resumed = await batchRequest(account.key, 'POST', `/v1/jobs/${job}/resume`);
    expect(resumed.body).to.include({ status: 'running', pause_state: 'active' });
    await site.requests.until(() => started() > settled);
    const stopped = await batchRequest(account.key, 'POST', `/v1/jobs/${job}/stop`);
    expect(stopped.status).to.equal(200);
    // The stop answers the run as stopped at once, as the clients document it; its tasks in flight may still finish.
    expect(stopped.body.status).to.equal('stopped');
    const atStop = started();
    expect((await batchRequest(account.key, 'GET', `/v1/jobs/${job}`)).body.latest_run.status).to.equal('stopped');
    const record = await waitForRunEnd(stopped.body.run_id as string);
    expect(record.status).to.equal('stopped');
    expect(started(), 'no task starts after the stop').to.equal(atStop);
    const run = await waitForRun(account.key, job);
    expect(run.status).to.equal('stopped');
    expect(run.stats.completed).to.be.lessThan(60);
    const rows = await allResults(account.key, `/v1/jobs/${job}/results`);
    expect(rows).to.have.length(60);
    const done = rows.filter((row) => row.status === 'successful').length;
    expect(done).to.equal(run.stats.successful);
    expect(rows.filter((row) => row.status === 'pending').length).to.equal(60 - done);
    expect(await creditsUsed(account.accountId)).to.equal(done);
    const again = await batchRequest(account.key, 'POST', `/v1/jobs/${job}/stop`);
    expect(again.status).to.equal(409);
    expect(again.body.code).to.equal('run_not_stoppable');
  });

  it('reruns only the failed tasks, keeping the others from the run before', async () => {
    const account = await batchAccount();
    const created = await batchRequest(account.key, 'POST', '/v1/jobs', { tasks: [...urls(site, 'ok', 8), ...urls(site, 'missing', 3)] });
    const job = created.body.job_id as string;
    const first = await waitForRun(account.key, job);
    expect(first.stats).to.deep.include({ successful: 8, failed: 3 });
    const rerun = await batchRequest(account.key, 'POST', `/v1/jobs/${job}/rerun?status=failed`, undefined, { 'Idempotency-Key': `rerun-${job}` });
    expect(rerun.status, JSON.stringify(rerun.body)).to.equal(202);
    expect(rerun.body).to.include({ rerun_of: first.run_id, retried_tasks: 3, inherited_tasks: 8 });
    const second = await waitForRun(account.key, job);
    expect(second.run_sequence).to.equal(2);
    expect(second.stats).to.deep.include({ total: 11, successful: 8, failed: 3 });
    expect(second.stats.spend.credits).to.equal(0);
    const rows = await allResults(account.key, `/v1/jobs/${job}/runs/${second.run_id as string}/results`);
    expect(rows.filter((row) => row.source_run_id === first.run_id)).to.have.length(8);
    const inherited = rows.find((row) => row.status === 'successful')!;
    expect(await (await fetch(inherited.result_url as string)).text()).to.contain('Page /ok/0');
    expect(await creditsUsed(account.accountId)).to.equal(8);
    const runs = await batchRequest(account.key, 'GET', `/v1/jobs/${job}/runs`);
    expect(runs.body.runs.map((run: Json) => run.run_sequence)).to.deep.equal([2, 1]);
    const none = await batchRequest(account.key, 'POST', `/v1/jobs/${job}/rerun?status=processing`);
    expect(none.status).to.equal(409);
    expect(none.body.code).to.equal('no_matching_tasks');
  });

  it('fails a run whose account runs out of credits, keeping what it fetched', async () => {
    const account = await batchAccount({ credits: 40 });
    const created = await batchRequest(account.key, 'POST', '/v1/jobs', { tasks: urls(site, 'ok', 150) });
    const run = await waitForRun(account.key, created.body.job_id as string);
    expect(run.status).to.equal('failed');
    expect(run.failure_reason).to.equal('insufficient_credits');
    expect(run.failure_detail).to.be.a('string').and.not.equal('');
    expect(run.stats.successful).to.equal(40);
    expect(await creditsUsed(account.accountId)).to.equal(40);
    const successful = await allResults(account.key, `/v1/jobs/${created.body.job_id as string}/results`, 'successful');
    expect(successful).to.have.length(40);
    const broke = await batchRequest(account.key, 'POST', '/v1/jobs', { tasks: urls(site, 'ok', 1) });
    expect(broke.status).to.equal(402);
    expect(broke.body.code).to.equal('payment_required');
  });

  it('answers the same job for the same Idempotency-Key and body, and 409 for another body', async () => {
    const account = await batchAccount();
    const body = { tasks: urls(site, 'ok', 3) };
    const first = await batchRequest(account.key, 'POST', '/v1/jobs', body, { 'Idempotency-Key': 'same-key' });
    const second = await batchRequest(account.key, 'POST', '/v1/jobs', body, { 'Idempotency-Key': 'same-key' });
    expect(second.body.job_id).to.equal(first.body.job_id);
    const other = await batchRequest(account.key, 'POST', '/v1/jobs', { tasks: urls(site, 'ok', 4) }, { 'Idempotency-Key': 'same-key' });
    expect(other.status).to.equal(409);
    expect(other.body.code).to.equal('idempotency_key_conflict');
  });

  it('lists jobs newest first with cursors, and keeps every id-bearing path to its account', async () => {
    const owner = await batchAccount();
    const other = await batchAccount();
    const ids: string[] = [];
    for (let index = 0; index < 3; index++) ids.push((await batchRequest(owner.key, 'POST', '/v1/jobs', { tasks: urls(site, 'ok', 2) })).body.job_id as string);
    const pageOne = await batchRequest(owner.key, 'GET', '/v1/jobs?limit=2');
    expect(pageOne.body.jobs.map((job: Json) => job.job_id)).to.deep.equal([ids[2], ids[1]]);
    const pageTwo = await batchRequest(owner.key, 'GET', `/v1/jobs?limit=2&cursor=${pageOne.body.next_cursor as string}`);
    expect(pageTwo.body.jobs.map((job: Json) => job.job_id)).to.deep.equal([ids[0]]);
    expect(pageTwo.body.next_cursor).to.equal(null);
    expect((await batchRequest(owner.key, 'GET', '/v1/jobs?limit=0')).status).to.equal(400);
    expect((await batchRequest(owner.key, 'GET', '/v1/jobs?cursor=nonsense')).status).to.equal(400);

    const job = ids[0]!;
    const run = await waitForRun(owner.key, job);
    const [row] = await allResults(owner.key, `/v1/jobs/${job}/results`);
    const exported = await batchRequest(owner.key, 'POST', `/v1/jobs/${job}/runs/${run.run_id as string}/exports`);
    expect((await batchRequest(other.key, 'GET', '/v1/jobs')).body.jobs).to.deep.equal([]);
    const paths: Array<[string, string, unknown?]> = [
      ['GET', `/v1/jobs/${job}`],
      ['DELETE', `/v1/jobs/${job}`],
      ['POST', `/v1/jobs/${job}/tasks`, { tasks: urls(site, 'ok', 1) }],
      ['POST', `/v1/jobs/${job}/close`],
      ['POST', `/v1/jobs/${job}/stop`],
      ['POST', `/v1/jobs/${job}/pause`],
      ['POST', `/v1/jobs/${job}/resume`],
      ['POST', `/v1/jobs/${job}/rerun`],
      ['GET', `/v1/jobs/${job}/runs`],
      ['GET', `/v1/jobs/${job}/runs/${run.run_id as string}`],
      ['DELETE', `/v1/jobs/${job}/runs/${run.run_id as string}`],
      ['GET', `/v1/jobs/${job}/results`],
      ['GET', `/v1/jobs/${job}/runs/${run.run_id as string}/results`],
      ['GET', `/v1/jobs/${job}/tasks/${row!.task_id as string}/content`],
      ['GET', `/v1/jobs/${job}/tasks/${row!.task_id as string}/history`],
      ['POST', `/v1/jobs/${job}/runs/${run.run_id as string}/exports`],
      ['GET', `/v1/jobs/${job}/runs/${run.run_id as string}/exports/${exported.body.export_id as string}`],
      ['GET', `/v1/jobs/${job}/webhook`],
      ['PUT', `/v1/jobs/${job}/webhook`, { url: 'https://example.com/hook', signature: false }],
      ['DELETE', `/v1/jobs/${job}/webhook`],
      ['GET', `/v1/jobs/${job}/webhook/deliveries`],
    ];
    for (const [method, path, body] of paths) {
      const answer = await batchRequest(other.key, method, path, body);
      expect(answer.status, `${method} ${path}`).to.equal(404);
      expect(answer.body.code, `${method} ${path}`).to.equal('not_found');
    }
    expect((await batchRequest(owner.key, 'GET', `/v1/jobs/${job}`)).status).to.equal(200);
  });

  it('exports a run as NDJSON and CSV through expiring links', async () => {
    const account = await batchAccount();
    const created = await batchRequest(account.key, 'POST', '/v1/jobs', { tasks: [...urls(site, 'ok', 3), ...urls(site, 'missing', 1)] });
    const job = created.body.job_id as string;
    const run = await waitForRun(account.key, job);
    for (const format of ['ndjson', 'csv']) {
      const started = await batchRequest(account.key, 'POST', `/v1/jobs/${job}/runs/${run.run_id as string}/exports${format === 'csv' ? '?format=csv' : ''}`);
      expect(started.status).to.equal(202);
      expect(started.body.export_id).to.match(/^[0-9A-HJKMNP-TV-Z]{26}$/);
      let exported: Json = {};
      await eventually(async () => {
        exported = (await batchRequest(account.key, 'GET', `/v1/jobs/${job}/runs/${run.run_id as string}/exports/${started.body.export_id as string}`)).body;
        return exported.status === 'completed';
      });
      const file = await fetch(exported.download_url as string);
      expect(file.status).to.equal(200);
      const text = await file.text();
      if (format === 'ndjson') {
        const lines = text.trim().split('\n').map((line) => JSON.parse(line) as Json);
        expect(lines.map((line) => line.status)).to.deep.equal(['successful', 'successful', 'successful', 'failed']);
        expect(lines[1]!.content).to.contain('Page /ok/1');
        expect(lines[3]!.error.code).to.equal('RESP002');
      } else {
        expect(text.split('\r\n')[0]).to.equal('task_id,url,external_id,status,type,error_code,error_detail,content_encoding,content');
        expect(text).to.contain('RESP002');
      }
    }
  });

  it('creates a job from an uploaded CSV input', async () => {
    const account = await batchAccount();
    const created = await batchRequest(account.key, 'POST', '/v1/job_inputs', { type: 'csv', csv: { header: true, fields: { url: 'link', external_id: 'ref' } } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const notYet = await batchRequest(account.key, 'POST', '/v1/jobs', { type: 'regular', status: 'closed', file_input_id: created.body.file_input_id });
    expect(notYet.status).to.equal(409);
    expect(notYet.body.code).to.equal('file_input_not_uploaded');
    const csv = `ref,link\nA1,${site.url}ok/1\n"B,2",${site.url}ok/2\n`;
    const upload = await fetch(created.body.upload.url as string, { method: 'PUT', headers: created.body.upload.headers as Record<string, string>, body: csv });
    expect(upload.status).to.equal(200);
    const job = await batchRequest(account.key, 'POST', '/v1/jobs', { type: 'regular', status: 'closed', file_input_id: created.body.file_input_id });
    expect(job.status, JSON.stringify(job.body)).to.equal(400);
    expect(job.body.code).to.equal('invalid_argument');
    const good = await batchRequest(account.key, 'POST', '/v1/job_inputs', { type: 'csv', csv: { header: true, fields: { url: 1, external_id: 0 } } });
    await fetch(good.body.upload.url as string, { method: 'PUT', body: `ref,link\nA1,${site.url}ok/1\nB2,${site.url}ok/2\n` });
    const made = await batchRequest(account.key, 'POST', '/v1/jobs', { file_input_id: good.body.file_input_id });
    expect(made.status).to.equal(201);
    expect(made.body.accepted_tasks).to.equal(2);
    await waitForRun(account.key, made.body.job_id as string);
    const rows = await allResults(account.key, `/v1/jobs/${made.body.job_id as string}/results`);
    expect(rows.map((row) => row.external_id)).to.deep.equal(['A1', 'B2']);
  });

  it('deletes a job: its run ends as deleted and its reads answer 404', async () => {
    const account = await batchAccount({ concurrency: 1 });
    const created = await batchRequest(account.key, 'POST', '/v1/jobs', { tasks: urls(site, 'slow', 20) });
    const job = created.body.job_id as string;
    const deleted = await batchRequest(account.key, 'DELETE', `/v1/jobs/${job}`);
    expect(deleted.status).to.equal(204);
    expect((await batchRequest(account.key, 'GET', `/v1/jobs/${job}`)).status).to.equal(404);
    const store = await batchStore();
    await eventually(async () => (await store.runs.findOne({ job_id: job }))?.ended_at != null);
    expect((await store.runs.findOne({ job_id: job }))?.status).to.equal('deleted');
  });
});
