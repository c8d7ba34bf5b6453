/**
 * What an outside probe found on the running service: secrets in the access log, open operational
 * endpoints, cross-site "simple" POSTs, adopted request ids, and the answers Node gives by itself.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { newAccount, openAccounts, type AccountsHandle } from '../helpers/app';
import { parseRaw, rawExchange } from '../helpers/raw-http';
import { eventually, operatorHeaders, testStack } from '../helpers/stack';

const PROBLEM = 'application/problem+json';
const api = (): string => testStack().urls.api;
const apiLog = (): string => readFileSync(testStack().component('api').logFile, 'utf8');

describe('hardening of the running service', () => {
  let handle: AccountsHandle;
  before(async () => {
    handle = await openAccounts();
  });
  after(() => handle.close());

  it('logs route patterns, never a credential that passed through a path, a query or a header', async () => {
    const signup = await fetch(`${api()}/api/agent/signup`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(signup.status).to.equal(201);
    const { apiKey, claimUrl } = (await signup.json()) as { apiKey: string; claimUrl: string };
    const claimPath = new URL(claimUrl).pathname;
    const token = claimPath.split('/').pop() ?? '';
    expect(token).to.match(/^[0-9a-f]{48}$/);

    expect((await fetch(`${api()}${claimPath}`)).status).to.equal(200);
    expect((await fetch(`${api()}/v1/crawls?apikey=${apiKey}`)).status).to.equal(200);
    expect((await fetch(`${api()}/v1/?apikey=${apiKey}&url=not-a-url`)).status).to.equal(400);
    expect((await fetch(`${api()}/v1/subscriptions/self/details`, { headers: { 'X-API-Key': apiKey } })).status).to.equal(200);
    const operator = operatorHeaders().Authorization?.split(' ')[1] ?? '';
    expect((await fetch(`${api()}/metrics`, { headers: operatorHeaders() })).status).to.equal(200);

    await eventually(async () => apiLog().includes('"route":"/claim/{account_id}/{token}"'));
    const log = apiLog();
    expect(log).to.contain('"route":"/v1/crawls"');
    for (const secret of [apiKey, token, operator]) expect(log).to.not.contain(secret);
  });

  it('keeps its own request id and logs the caller’s as client_request_id', async () => {
    const theirs = `trace-${Date.now().toString(36)}`;
    const response = await fetch(`${api()}/healthz`, { headers: { 'X-Request-Id': theirs } });
    const ours = response.headers.get('x-request-id') ?? '';
    expect(ours).to.match(/^[0-9a-f-]{36}$/);
    await eventually(async () => apiLog().includes(theirs));
    const line = apiLog()
      .split('\n')
      .find((entry) => entry.includes(theirs));
    expect(JSON.parse(line ?? '{}')).to.include({ request_id: ours, client_request_id: theirs });
  });

  it('opens /metrics and /readyz?deep=true to the operator token only; /readyz and /healthz stay open', async () => {
    for (const path of ['/metrics', '/readyz?deep=true']) {
      for (const headers of [{}, { Authorization: 'Bearer wrong' }] as Array<Record<string, string>>) {
        const refused = await fetch(`${api()}${path}`, { headers });
        expect(refused.status, path).to.equal(401);
        expect(refused.headers.get('content-type')).to.equal(PROBLEM);
        expect(((await refused.json()) as { code: string }).code).to.equal('unauthenticated');
      }
    }
    const metrics = await fetch(`${api()}/metrics`, { headers: operatorHeaders() });
    expect(metrics.status).to.equal(200);
    expect(await metrics.text()).to.contain('http_requests_total');
    expect((await fetch(`${api()}/readyz`)).status).to.equal(200);
    expect((await fetch(`${api()}/healthz`)).status).to.equal(200);
  });

  it('refuses a JSON body not sent as application/json with 415, creating nothing', async () => {
    const before = await handle.db.db.collection('accounts').countDocuments();
    // What a page on any site can send without asking: a "simple" text/plain POST.
    const signup = await fetch(`${api()}/api/agent/signup`, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: '{}' });
    expect(signup.status).to.equal(415);
    expect(await signup.json()).to.have.property('error', 'unsupported_media_type');
    const form = await fetch(`${api()}/api/agent/signup`, { method: 'POST', body: new URLSearchParams({ client: 'x' }) });
    expect(form.status).to.equal(415);
    expect(await handle.db.db.collection('accounts').countDocuments()).to.equal(before);

    const crawl = await fetch(`${api()}/v1/crawls`, { method: 'POST', headers: { 'Content-Type': 'text/plain', 'X-API-Key': 'f'.repeat(40) }, body: '{"url":"http://example.com/"}' });
    // Authentication comes first; a valid key then meets the 415.
    expect(crawl.status).to.equal(401);
    const { key: apiKey } = await newAccount(handle.accounts);
    const crawls = await handle.db.db.collection('crawls').countDocuments();
    const typed = await fetch(`${api()}/v1/crawls`, { method: 'POST', headers: { 'Content-Type': 'text/plain', 'X-API-Key': apiKey }, body: '{"url":"http://example.com/"}' });
    expect(typed.status).to.equal(415);
    expect(typed.headers.get('content-type')).to.equal(PROBLEM);
    expect(((await typed.json()) as { code: string }).code).to.equal('unsupported_media_type');
    expect(await handle.db.db.collection('crawls').countDocuments()).to.equal(crawls);
  });

  it('answers 405 with Allow, in the envelope of the surface', async () => {
    const health = await fetch(`${api()}/healthz`, { method: 'DELETE' });
    expect(health.status).to.equal(405);
    expect(health.headers.get('allow')?.split(', ').sort()).to.deep.equal(['GET', 'HEAD']);
    expect(health.headers.get('content-type')).to.equal(PROBLEM);
    const agent = await fetch(`${api()}/api/agent/account`, { method: 'POST' });
    expect(agent.status).to.equal(405);
    expect(agent.headers.get('allow')?.split(', ').sort()).to.deep.equal(['GET', 'HEAD']);
    const body = (await agent.json()) as Record<string, unknown>;
    expect(body).to.have.keys('error', 'message');
    expect(body.error).to.equal('method_not_allowed');
  });

  it('answers HTTP/1.1 without Host, an unknown Expect and CONNECT with problem documents', async () => {
    const noHost = parseRaw(await rawExchange(api(), 'GET /healthz HTTP/1.1\r\n\r\n'));
    expect([noHost.status, noHost.headers['content-type'], noHost.body.code]).to.deep.equal([400, PROBLEM, 'invalid_request']);
    const expect100 = parseRaw(await rawExchange(api(), 'GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nConnection: close\r\n\r\n'));
    expect([expect100.status, expect100.headers['content-type'], expect100.body.code]).to.deep.equal([417, PROBLEM, 'expectation_failed']);
    const connect = parseRaw(await rawExchange(api(), 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'));
    expect([connect.status, connect.headers['content-type'], connect.body.code]).to.deep.equal([405, PROBLEM, 'method_not_allowed']);
    const agentHeaders = parseRaw(await rawExchange(api(), `GET /api/agent/account HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`));
    expect(agentHeaders.status).to.equal(431);
    expect(agentHeaders.body).to.have.property('error', 'request_header_fields_too_large');
  });

  it('answers a path parameter with a literal % as a 404, not a 500', async () => {
    const { key: apiKey } = await newAccount(handle.accounts);
    const response = await fetch(`${api()}/v1/extract/prepared-domains/%25zz.com`, { headers: { 'X-API-Key': apiKey } });
    expect(response.status).to.equal(404);
    expect(((await response.json()) as { code: string }).code).to.equal('not_found');
  });
});
