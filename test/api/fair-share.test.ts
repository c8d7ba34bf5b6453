/**
 * Fair share through the running service: what an account holds at once is limited per plan (the
 * N+1st is 429 `quota_exceeded` naming the limit, a bigger plan gets more, another account is not
 * affected), CSV inputs are capped and checked as they arrive, an MCP session acts on each request's
 * key, OAuth tokens expire and refresh once, keyless writes from other sites are refused, and the
 * request rate limiter counts per subject and window. Each account has a request budget (429
 * `rate_limited` with `Retry-After`, not shared with other accounts), and concurrent creations never
 * take more than the limit.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { ManualClock } from '../../base/clock';
import { LimitGate } from '../../core/accounts/limit-gate';
import { RateLimiter } from '../../core/accounts/rate-limits';
import { RequestBudget } from '../../core/accounts/request-budget';
import { createOAuthTokens } from '../../core/oauth/tokens';
import { csvField } from '../../core/batch/exports/write';
import { batchStore } from '../batch/helpers';
import { openAccounts, newAccount, type AccountsHandle, type TestAccount } from '../helpers/app';
import { testStack } from '../helpers/stack';
import { batchRequest } from '../webhooks/helpers';

const api = () => testStack().urls.api;
const HOUR = { rate: { every: 1, unit: 'hour' } };

/** Opens an MCP session with `key`: the answer's status and session id. */
async function openSession(key: string): Promise<{ status: number; id: string | null; body: string }> {
  const response = await fetch(`${api()}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fair-share', version: '1' } } }),
  });
  return { status: response.status, id: response.headers.get('mcp-session-id'), body: await response.text() };
}

async function sessionCall(key: string, session: string, message: unknown): Promise<{ status: number; text: string }> {
  const response = await fetch(`${api()}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(message),
  });
  return { status: response.status, text: await response.text() };
}

async function upload(key: string, csv: Record<string, unknown>, body: Buffer | string): Promise<{ status: number; json: Record<string, unknown>; inputId: string }> {
  const created = await batchRequest(key, 'POST', '/v1/job_inputs', { type: 'csv', csv });
  expect(created.status, JSON.stringify(created.body)).to.equal(201);
  const upload = created.body.upload as { url: string };
  const response = await fetch(upload.url, { method: 'PUT', headers: { 'content-type': 'text/csv' }, body });
  const text = await response.text();
  return { status: response.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {}, inputId: created.body.file_input_id as string };
}

describe('fair share under abuse', function () {
  this.timeout(180_000);
  let handle: AccountsHandle;
  const account = (plan = 'free'): Promise<TestAccount> => newAccount(handle.accounts, { plan, credits: 1_000_000 });

  before(async () => {
    handle = await openAccounts();
  });
  after(async () => {
    await handle.close();
  });

  it('limits scheduled jobs per plan: the 6th on the free plan is 429 naming scheduled_jobs; a bigger plan and another account get more', async () => {
    const free = await account();
    const job = (key: string) => batchRequest(key, 'POST', '/v1/jobs', { type: 'scheduled', schedule: HOUR, tasks: [{ url: 'http://127.0.0.1:9/x' }] });
    for (let n = 0; n < 5; n++) expect((await job(free.key)).status, `job ${n + 1}`).to.equal(201);
    const refused = await job(free.key);
    expect(refused.status).to.equal(429);
    expect([refused.body.code, refused.body.limit, refused.body.allowed]).to.deep.equal(['quota_exceeded', 'scheduled_jobs', 5]);
    expect((await job((await account()).key)).status, 'another account').to.equal(201);
    const developer = await account('developer');
    for (let n = 0; n < 6; n++) expect((await job(developer.key)).status, `developer job ${n + 1}`).to.equal(201);
    // A deleted job gives its place back.
    const listed = await batchRequest(free.key, 'GET', '/v1/jobs?limit=1');
    const first = ((listed.body.jobs ?? listed.body.items) as Array<{ job_id?: string; id?: string }>)[0];
    expect((await batchRequest(free.key, 'DELETE', `/v1/jobs/${first?.job_id ?? first?.id ?? ''}`)).status).to.equal(204);
    expect((await job(free.key)).status).to.equal(201);
  });

  it('refuses a schedule date past the supported range with 400, not 500', async () => {
    const free = await account();
    const answer = await batchRequest(free.key, 'POST', '/v1/jobs', { type: 'scheduled', schedule: { at: '2150-01-01T09:00:00', timezone: 'UTC' }, tasks: [{ url: 'http://127.0.0.1:9/x' }] });
    expect([answer.status, answer.body.code, answer.body.parameter]).to.deep.equal([400, 'invalid_argument', 'schedule.at']);
  });

  it('limits stored CSV inputs per plan: the 21st on the free plan is 429 naming stored_inputs', async () => {
    const free = await account();
    const allocate = (key: string) => batchRequest(key, 'POST', '/v1/job_inputs', { type: 'csv', csv: { fields: { url: 0 } } });
    for (let n = 0; n < 20; n++) expect((await allocate(free.key)).status, `input ${n + 1}`).to.equal(201);
    const refused = await allocate(free.key);
    expect([refused.status, refused.body.code, refused.body.limit]).to.deep.equal([429, 'quota_exceeded', 'stored_inputs']);
    expect((await allocate((await account()).key)).status, 'another account').to.equal(201);
    expect((await allocate((await account('developer')).key)).status).to.equal(201);
  });

  it('limits exports being written per plan, naming concurrent_exports', async () => {
    const free = await account();
    const made = await batchRequest(free.key, 'POST', '/v1/jobs', { tasks: [{ url: 'http://127.0.0.1:9/x' }] });
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
    const jobId = made.body.job_id as string;
    const runId = (made.body.latest_run as { run_id: string }).run_id;
    // Three exports still being written (as a slow worker would leave them).
    const { exports } = await batchStore();
    const now = new Date();
    await exports.insertMany(
      [0, 1, 2].map((n) => ({ _id: `fair_${randomUUID()}_${n}`, job_id: jobId, run_id: runId, account_id: free.accountId, format: 'ndjson' as const, status: 'running' as const, error: null, size: 0, chunks: 0, created_at: now, expires_at: new Date(now.getTime() + 3_600_000) })),
    );
    const refused = await batchRequest(free.key, 'POST', `/v1/jobs/${jobId}/runs/${runId}/exports`);
    expect([refused.status, refused.body.code, refused.body.limit]).to.deep.equal([429, 'quota_exceeded', 'concurrent_exports']);
    expect(refused.headers.get('retry-after')).to.equal('30');
  });

  it('refuses a CSV input past the size cap with 413 naming it, and reads one below it (BOM included)', async () => {
    const free = await account();
    const cap = 50 * 1024 * 1024;
    const tooBig = await upload(free.key, { fields: { url: 0 } }, Buffer.alloc(cap + 1, 'a'));
    expect([tooBig.status, tooBig.json.code, tooBig.json.limit, tooBig.json.allowed]).to.deep.equal([413, 'payload_too_large', 'csv_input_max_bytes', cap]);
    expect(String(tooBig.json.detail)).to.contain(String(cap));
    const good = await upload(free.key, { header: true, fields: { url: 'link', external_id: 'ref' } }, '\uFEFFref,link\r\nA1,http://127.0.0.1:9/a\r\n"B2",http://127.0.0.1:9/b\r\n');
    expect(good.status, JSON.stringify(good.json)).to.equal(200);
    const job = await batchRequest(free.key, 'POST', '/v1/jobs', { file_input_id: good.inputId });
    expect(job.status, JSON.stringify(job.body)).to.equal(201);
    expect(job.body.accepted_tasks).to.equal(2);
    // Reused: read again from its parsed form.
    expect((await batchRequest(free.key, 'POST', '/v1/jobs', { file_input_id: good.inputId })).body.accepted_tasks).to.equal(2);
  });

  it('refuses CSV inputs with invalid bytes or an unterminated quote, naming the line', async () => {
    const free = await account();
    const invalid = await upload(free.key, { fields: { url: 0 } }, Buffer.concat([Buffer.from('http://127.0.0.1:9/a\nhttp://127.0.0.1:9/b\nhttp://'), Buffer.from([0xff, 0xfe]), Buffer.from('/c\n')]));
    expect([invalid.status, invalid.json.code, invalid.json.line]).to.deep.equal([400, 'invalid_argument', 3]);
    const unterminated = await upload(free.key, { fields: { url: 0 } }, 'http://127.0.0.1:9/a\n"http://127.0.0.1:9/b\nhttp://127.0.0.1:9/c\n');
    expect([unterminated.status, unterminated.json.code, unterminated.json.line]).to.deep.equal([400, 'invalid_argument', 2]);
    expect(String(unterminated.json.detail)).to.contain('Line 2');
  });

  it('escapes CSV export cells a spreadsheet would run as formulas', () => {
    expect(['=1+2', '+A1', '-3', '@SUM(A1)', '\tx', '\rx', 'plain', 'a,b'].map(csvField)).to.deep.equal(["'=1+2", "'+A1", "'-3", "'@SUM(A1)", "'\tx", '"\'\rx"', 'plain', '"a,b"']);
  });

  it('limits open MCP sessions per plan: the 21st on the free plan is 429 naming mcp_sessions', async () => {
    const free = await account();
    for (let n = 0; n < 20; n++) expect((await openSession(free.key)).status, `session ${n + 1}`).to.equal(200);
    const refused = await openSession(free.key);
    expect(refused.status).to.equal(429);
    expect((JSON.parse(refused.body) as { error: { data: { limit: string } } }).error.data.limit).to.equal('mcp_sessions');
    expect((await openSession((await account()).key)).status, 'another account').to.equal(200);
    const developer = await account('developer');
    for (let n = 0; n < 21; n++) expect((await openSession(developer.key)).status, `developer session ${n + 1}`).to.equal(200);
  });

  it('refuses a revoked key’s open MCP session on its next request', async () => {
    const owner = await account();
    const opened = await openSession(owner.key);
    expect(opened.status).to.equal(200);
    const session = opened.id ?? '';
    await sessionCall(owner.key, session, { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect((await sessionCall(owner.key, session, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status).to.equal(200);
    await handle.accounts.store.revokeKey(owner.keyId);
    // The API process sees the revocation once its key cache entry lapses (KEY_CACHE_TTL_MS).
    let status = 0;
    for (let attempt = 0; attempt < 40 && status !== 401; attempt++) {
      status = (await sessionCall(owner.key, session, { jsonrpc: '2.0', id: 2 + attempt, method: 'tools/list' })).status;
      if (status !== 401) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(status).to.equal(401);
  });

  it('answers a second in-flight request with the same JSON-RPC id with an error and ends its stream', async () => {
    const owner = await account();
    const opened = await openSession(owner.key);
    const session = opened.id ?? '';
    await sessionCall(owner.key, session, { jsonrpc: '2.0', method: 'notifications/initialized' });
    // Two requests with id 7 in one message: the second is refused before anything runs.
    const batch = await sessionCall(owner.key, session, [
      { jsonrpc: '2.0', id: 7, method: 'tools/list' },
      { jsonrpc: '2.0', id: 7, method: 'tools/list' },
    ]);
    expect(batch.status).to.equal(409);
    expect(JSON.parse(batch.text)).to.deep.include({ id: 7 });
    // The session still answers, and the id is free again once its request ended.
    expect((await sessionCall(owner.key, session, { jsonrpc: '2.0', id: 7, method: 'tools/list' })).status).to.equal(200);
  });

  it('expires an OAuth access token, and its refresh token works once', async () => {
    const owner = await account();
    const tokens = createOAuthTokens(handle.db.db, handle.accounts, 2);
    const first = await tokens.issue({ clientId: 'oc_test', clientName: 'fair', accountId: owner.accountId, scope: 'api' });
    const usage = (key: string) => fetch(`${api()}/v1/subscriptions/self/details`, { headers: { 'x-api-key': key } }).then((response) => response.status);
    expect(await usage(first.access_token)).to.equal(200);
    await new Promise((resolve) => setTimeout(resolve, 2_200));
    expect(await usage(first.access_token), 'expired').to.equal(401);
    const second = await tokens.refresh(first.refresh_token, 'oc_test', 'fair');
    expect(second?.access_token).to.match(/^[0-9a-f]{40}$/);
    expect(await usage(second?.access_token ?? '')).to.equal(200);
    expect(await tokens.refresh(first.refresh_token, 'oc_test', 'fair'), 'spent').to.equal(undefined);
    await tokens.revoke(second?.refresh_token ?? '', 'oc_test');
    expect(await tokens.refresh(second?.refresh_token ?? '', 'oc_test', 'fair'), 'revoked').to.equal(undefined);
  });

  it('refuses a cross-site signup: no account is made', async () => {
    const before = await handle.db.db.collection('accounts').countDocuments();
    const cases: Array<Record<string, string>> = [{ origin: 'https://evil.example', 'content-type': 'text/plain' }, { 'sec-fetch-site': 'cross-site', 'content-type': 'application/json' }];
    for (const headers of cases) {
      const response = await fetch(`${api()}/api/agent/signup`, { method: 'POST', headers, body: headers['content-type'] === 'text/plain' ? '' : '{}' });
      expect(response.status, JSON.stringify(headers)).to.equal(403);
      expect(((await response.json()) as { error: string }).error).to.equal('cross_site');
    }
    expect(await handle.db.db.collection('accounts').countDocuments()).to.equal(before);
  });

  it('refuses a consent form posted from another site or without the page’s token', async () => {
    const cases: Array<Record<string, string>> = [{ origin: 'https://evil.example' }, {}];
    for (const headers of cases) {
      const response = await fetch(`${api()}/oauth/authorize`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams({ decision: 'signup', client_id: 'oc_x', redirect_uri: 'http://127.0.0.1/cb' }).toString(),
      });
      expect(response.status, JSON.stringify(headers)).to.equal(403);
    }
  });

  it('counts requests per subject and window, answering when to retry', async () => {
    const limiter = new RateLimiter(handle.db.db);
    const subject = `test|net:${randomUUID()}`;
    for (let n = 0; n < 3; n++) expect(await limiter.take(subject, 3, 60_000)).to.deep.equal({ ok: true });
    const refused = await limiter.take(subject, 3, 60_000);
    expect(refused.ok).to.equal(false);
    expect(refused.ok ? 0 : refused.retryAfterSeconds).to.be.within(1, 60);
    // Another process (a fresh limiter) counts the same records; another subject is not affected.
    expect((await new RateLimiter(handle.db.db).take(subject, 3, 60_000)).ok).to.equal(false);
    expect((await limiter.take(`test|net:${randomUUID()}`, 3, 60_000)).ok).to.equal(true);
  });
  it('refuses an account past its request budget with 429 rate_limited and Retry-After, on REST and MCP; other accounts are not affected', async () => {
    // A budget of 3 requests that refills one request in 1,000 s: the 4th is refused whatever the machine's speed.
    const made = await handle.accounts.store.createAccount({ plan: 'free', overrides: { credits: 1_000_000, requestsPerSecond: 0.001, requestBurst: 3 } });
    const { key } = await handle.accounts.store.createKey(made._id, {});
    for (let n = 0; n < 3; n++) expect((await batchRequest(key, 'GET', '/v1/jobs')).status, `request ${n + 1}`).to.equal(200);
    const refused = await batchRequest(key, 'GET', '/v1/jobs');
    expect([refused.status, refused.body.code, refused.body.limit]).to.deep.equal([429, 'rate_limited', 'requests_per_second']);
    expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 1_000);
    const session = await openSession(key);
    expect(session.status).to.equal(429);
    expect((JSON.parse(session.body) as { error: { data: { code: string } } }).error.data.code).to.equal('rate_limited');
    // Another account, even one sending many requests at once, keeps its own budget.
    const other = await account();
    const statuses = await Promise.all(Array.from({ length: 30 }, () => batchRequest(other.key, 'GET', '/v1/jobs').then((answer) => answer.status)));
    expect(statuses.every((status) => status === 200), statuses.join(',')).to.equal(true);
  });

  it('never lets concurrent creations pass a limit: scheduled jobs, MCP sessions, stored inputs', async () => {
    const free = await account();
    const jobs = await Promise.all(
      Array.from({ length: 12 }, () => batchRequest(free.key, 'POST', '/v1/jobs', { type: 'scheduled', schedule: HOUR, tasks: [{ url: 'http://127.0.0.1:9/x' }] }).then((answer) => answer.status)),
    );
    expect(jobs.filter((status) => status === 201).length, jobs.join(',')).to.equal(5);
    expect(jobs.filter((status) => status === 429).length, jobs.join(',')).to.equal(7);
    const { jobs: stored } = await batchStore();
    expect(await stored.countDocuments({ account_id: free.accountId, type: 'scheduled', status: { $ne: 'deleted' } })).to.equal(5);
    const sessions = await Promise.all(Array.from({ length: 30 }, () => openSession(free.key).then((answer) => answer.status)));
    expect(sessions.filter((status) => status === 200).length, sessions.join(',')).to.equal(20);
    expect(await handle.db.db.collection('mcp_sessions').countDocuments({ account_id: free.accountId })).to.equal(20);
    const inputs = await Promise.all(Array.from({ length: 30 }, () => batchRequest(free.key, 'POST', '/v1/job_inputs', { type: 'csv', csv: { fields: { url: 0 } } }).then((answer) => answer.status)));
    expect(inputs.filter((status) => status === 201).length, inputs.join(',')).to.equal(20);
  });

  it('takes a budget per account: a burst, then the refill rate, and a cap on requests in flight', () => {
    const clock = new ManualClock(0);
    const budget = new RequestBudget(clock);
    const limits = { requestsPerSecond: 2, requestBurst: 3, requestsInFlight: 2 };
    const first = budget.take('a', limits);
    const second = budget.take('a', limits);
    expect([first.ok, second.ok]).to.deep.equal([true, true]);
    expect(budget.take('a', limits)).to.deep.equal({ ok: false, reason: 'in_flight', retryAfterSeconds: 1, waitMs: 0 });
    if (first.ok) first.done();
    if (first.ok) first.done(); // twice frees once
    const third = budget.take('a', limits);
    expect(third.ok).to.equal(true);
    if (second.ok) second.done();
    if (third.ok) third.done();
    const refused = budget.take('a', limits);
    expect(refused).to.deep.equal({ ok: false, reason: 'rate', retryAfterSeconds: 1, waitMs: 500 });
    expect(budget.take('b', limits).ok, 'another account').to.equal(true);
    clock.advance(500);
    expect(budget.take('a', limits).ok, 'one request refilled').to.equal(true);
  });

  it('remembers a limit’s refusal briefly without reading again, until the account frees a place', async () => {
    const clock = new ManualClock(Date.now());
    const gate = new LimitGate(handle.db.db, clock, 1_500);
    const free = handle.accounts.plans.resolve('free');
    const principal = { accountId: `acc_${randomUUID()}`, plan: { ...free, limits: { ...free.limits, scheduledJobs: 2 } } };
    const live = new Set<string>();
    let reads = 0;
    const states = async (ids: string[]) => {
      reads++;
      return new Map(ids.filter((id) => live.has(id)).map((id) => [id, 'live' as const]));
    };
    const create = (id: string) => gate.admit(principal, 'scheduledJobs', { id, states }, async () => void live.add(id));
    await create('a');
    await create('b');
    const refusal = await create('c').catch((error: { code?: string }) => error.code);
    expect([refusal, reads]).to.deep.equal(['quota_exceeded', 1]);
    for (let n = 0; n < 10; n++) await create(`x${n}`).catch(() => undefined);
    expect(reads, 'answered from memory').to.equal(1);
    expect(() => gate.refusedNow(principal.accountId, 'scheduledJobs')).to.throw();
    clock.advance(1_500);
    await create('d').catch(() => undefined);
    expect(reads, 'read again once the memory ends').to.equal(2);
    live.delete('a');
    await gate.release(principal, 'scheduledJobs', 'a');
    await create('e');
    expect([...live].sort(), 'a place given back is taken at once').to.deep.equal(['b', 'e']);
  });
});
