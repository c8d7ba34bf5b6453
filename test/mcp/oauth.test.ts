/**
 * OAuth 2.1 for the MCP server, driven as an agent would: discovery from the 401, dynamic registration,
 * authorization with PKCE S256 through the consent page in headless Chromium, the token exchange, and a
 * tool call with the access token. Then each way a flow must fail.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'chai';
import { chromium } from 'playwright-core';
import { startFixtureServer, type FixtureServer } from '../helpers/fixtures';
import { testStack } from '../helpers/stack';
import { accountsService, fetchAccount } from '../fetch/helpers';
import type { TestAccount } from '../helpers/app';

const verifierPair = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

const api = () => testStack().urls.api;

async function register(redirectUris: string[]): Promise<string> {
  const response = await fetch(`${api()}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'test agent', redirect_uris: redirectUris }),
  });
  expect(response.status).to.equal(201);
  return ((await response.json()) as { client_id: string }).client_id;
}

function authorizeUrl(params: Record<string, string>): string {
  return `${api()}/oauth/authorize?${new URLSearchParams(params).toString()}`;
}

/** The consent page's CSRF token and the cookie it came with, as a browser holds them. */
async function consentForm(params: Record<string, string>): Promise<{ csrf: string; cookie: string }> {
  const page = await fetch(authorizeUrl(params));
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
  const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  return { csrf, cookie };
}

/** Posts the consent form as the page would, and returns where the browser would be sent. */
async function consent(params: Record<string, string>, key: string): Promise<URL> {
  const { csrf, cookie } = await consentForm(params);
  const response = await fetch(`${api()}/oauth/authorize`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams({ ...params, csrf, api_key: key, decision: 'approve' }).toString(),
  });
  expect(response.status, await response.clone().text()).to.equal(302);
  return new URL(response.headers.get('location') ?? '');
}

async function token(form: Record<string, string>): Promise<{ status: number; body: Record<string, string> }> {
  const response = await fetch(`${api()}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: response.status, body: (await response.json()) as Record<string, string> };
}

function revoke(form: Record<string, string>): Promise<Response> {
  return fetch(`${api()}/oauth/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() });
}

async function mcpClient(accessToken: string): Promise<Client> {
  const client = new Client({ name: 'oauth-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${api()}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${accessToken}` } } }));
  return client;
}

const toolText = async (client: Client, name: string, args: Record<string, unknown> = {}): Promise<{ isError: boolean; text: string }> => {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const [first] = result.content;
  return { isError: result.isError === true, text: first?.type === 'text' ? first.text : '' };
};

describe('OAuth 2.1 for the MCP server', function () {
  this.timeout(120_000);
  let receiver: FixtureServer;
  let callback: string;
  let account: TestAccount;
  let clientId: string;

  before(async () => {
    receiver = await startFixtureServer((_req, res) => {
      res.setHeader('Content-Type', 'text/html');
      res.end('<html><body>back at the agent</body></html>');
    });
    callback = `http://127.0.0.1:${receiver.port}/callback`;
    account = await fetchAccount();
    clientId = await register([callback]);
  });
  after(async () => {
    await receiver.close();
  });

  it('runs the whole flow: discovery, registration, consent in Chromium, token, a tool call; the key is revocable', async () => {
    const unauthorized = await fetch(`${api()}/mcp`, { method: 'POST', body: '{}' });
    const resourceMetadata = new URL(/resource_metadata="([^"]+)"/.exec(unauthorized.headers.get('www-authenticate') ?? '')?.[1] ?? '');
    const resource = (await (await fetch(`${api()}${resourceMetadata.pathname}`)).json()) as { authorization_servers: string[] };
    expect(resource.authorization_servers).to.have.length(1);
    const metadata = (await (await fetch(`${api()}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(metadata.code_challenge_methods_supported).to.deep.equal(['S256']);
    expect(metadata.scopes_supported).to.deep.equal(['api']);
    for (const endpoint of ['authorization_endpoint', 'token_endpoint', 'registration_endpoint']) expect(metadata[endpoint]).to.be.a('string');

    const { verifier, challenge } = verifierPair();
    const state = randomBytes(8).toString('hex');
    const browser = await chromium.launch({ executablePath: testStack().component('worker').spec.env.CHROMIUM_PATH, args: ['--no-sandbox', '--disable-gpu'] });
    let landed: URL;
    try {
      const page = await browser.newPage();
      await page.goto(authorizeUrl({ response_type: 'code', client_id: clientId, redirect_uri: callback, scope: 'api', state, code_challenge: challenge, code_challenge_method: 'S256' }));
      expect(await page.textContent('h1')).to.contain('test agent');
      await page.fill('#api_key', '0'.repeat(40));
      await page.click('#approve');
      expect(await page.textContent('[role=alert]')).to.contain('not valid');
      await page.fill('#api_key', account.key);
      await Promise.all([page.waitForURL((url) => url.href.startsWith(callback)), page.click('#approve')]);
      landed = new URL(page.url());
    } finally {
      await browser.close();
    }
    expect(landed.searchParams.get('state')).to.equal(state);
    const code = landed.searchParams.get('code') ?? '';
    expect(code).to.not.equal('');

    const issued = await token({ grant_type: 'authorization_code', code, redirect_uri: callback, client_id: clientId, code_verifier: verifier });
    expect(issued.status).to.equal(200);
    expect(issued.body.token_type).to.equal('Bearer');
    expect(issued.body.access_token).to.match(/^[0-9a-f]{40}$/);
    expect(issued.body.access_token).to.not.equal(account.key);

    const client = await mcpClient(issued.body.access_token ?? '');
    const usage = JSON.parse((await toolText(client, 'plan_usage')).text) as { api_key: { id: string } };
    await client.close();
    const accounts = await accountsService();
    const keys = await accounts.store.listKeys(account.accountId);
    const made = keys.find((key) => key.key_id === usage.api_key.id);
    expect(made?.name).to.equal('oauth:test agent');

    await accounts.store.revokeKey(usage.api_key.id);
    // Other processes see a revoked key once their key cache entry lapses.
    let status = 0;
    for (let attempt = 0; attempt < 60 && status !== 401; attempt++) {
      status = (await fetch(`${api()}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${issued.body.access_token ?? ''}` }, body: '{}' })).status;
      if (status !== 401) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(status).to.equal(401);

    // The API logged the requests, but none of the secrets that passed through them.
    const apiLog = readFileSync(testStack().component('api').logFile, 'utf8');
    expect(apiLog).to.contain('/oauth/token');
    for (const secret of [code, verifier, issued.body.access_token ?? '', account.key]) expect(apiLog).to.not.contain(secret);
  });

  it('lets someone without an account sign up on the consent page, see the claim link once, and continue', async () => {
    const { verifier, challenge } = verifierPair();
    const browser = await chromium.launch({ executablePath: testStack().component('worker').spec.env.CHROMIUM_PATH, args: ['--no-sandbox', '--disable-gpu'] });
    let landed: URL;
    let claim: string | null;
    try {
      const page = await browser.newPage();
      await page.goto(authorizeUrl({ response_type: 'code', client_id: clientId, redirect_uri: callback, scope: 'api', state: 'new', code_challenge: challenge, code_challenge_method: 'S256' }));
      await page.click('#signup');
      claim = await page.getAttribute('#claim', 'href');
      await Promise.all([page.waitForURL((url) => url.href.startsWith(callback)), page.click('#continue')]);
      landed = new URL(page.url());
    } finally {
      await browser.close();
    }
    expect(claim).to.match(/\/claim\/acc_[0-9a-z]+\//);
    expect(landed.searchParams.get('state')).to.equal('new');
    const issued = await token({ grant_type: 'authorization_code', code: landed.searchParams.get('code') ?? '', redirect_uri: callback, client_id: clientId, code_verifier: verifier });
    expect(issued.status).to.equal(200);
    const client = await mcpClient(issued.body.access_token ?? '');
    try {
      const usage = JSON.parse((await toolText(client, 'plan_usage')).text) as { usage: number; api_key: { id: string } };
      expect(usage.usage).to.equal(0);
      const accounts = await accountsService();
      expect((await accounts.store.listKeys(account.accountId)).map((key) => key.key_id)).to.not.include(usage.api_key.id);
    } finally {
      await client.close();
    }
  });

  describe('refusals', () => {
    const ask = (challenge: string, extra: Record<string, string> = {}) => ({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: callback,
      scope: 'api',
      state: 's1',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...extra,
    });

    it('refuses a wrong verifier, and the code is spent by the attempt', async () => {
      const { verifier, challenge } = verifierPair();
      const code = (await consent(ask(challenge), account.key)).searchParams.get('code') ?? '';
      const wrong = await token({ grant_type: 'authorization_code', code, redirect_uri: callback, client_id: clientId, code_verifier: verifierPair().verifier });
      expect([wrong.status, wrong.body.error]).to.deep.equal([400, 'invalid_grant']);
      const right = await token({ grant_type: 'authorization_code', code, redirect_uri: callback, client_id: clientId, code_verifier: verifier });
      expect([right.status, right.body.error]).to.deep.equal([400, 'invalid_grant']);
    });

    it('refuses a reused code', async () => {
      const { verifier, challenge } = verifierPair();
      const code = (await consent(ask(challenge), account.key)).searchParams.get('code') ?? '';
      const form = { grant_type: 'authorization_code', code, redirect_uri: callback, client_id: clientId, code_verifier: verifier };
      expect((await token(form)).status).to.equal(200);
      const again = await token(form);
      expect([again.status, again.body.error]).to.deep.equal([400, 'invalid_grant']);
    });

    it('expires access tokens in an hour; a refresh token works once and ends the token it came with; revocation (RFC 7009) ends a token', async () => {
      const { verifier, challenge } = verifierPair();
      const code = (await consent(ask(challenge), account.key)).searchParams.get('code') ?? '';
      const issued = await token({ grant_type: 'authorization_code', code, redirect_uri: callback, client_id: clientId, code_verifier: verifier });
      expect([issued.status, Number(issued.body.expires_in)]).to.deep.equal([200, 3600]);
      expect(issued.body.refresh_token).to.be.a('string');
      const usage = (key: string) => fetch(`${api()}/v1/subscriptions/self/details`, { headers: { 'x-api-key': key } }).then((response) => response.status);
      const refreshed = await token({ grant_type: 'refresh_token', refresh_token: issued.body.refresh_token ?? '', client_id: clientId });
      expect(refreshed.status).to.equal(200);
      expect(refreshed.body.access_token).to.not.equal(issued.body.access_token);
      expect(refreshed.body.refresh_token).to.not.equal(issued.body.refresh_token);
      expect(await usage(refreshed.body.access_token ?? '')).to.equal(200);
      expect(await usage(issued.body.access_token ?? ''), 'the old access token').to.equal(401);
      const again = await token({ grant_type: 'refresh_token', refresh_token: issued.body.refresh_token ?? '', client_id: clientId });
      expect([again.status, again.body.error]).to.deep.equal([400, 'invalid_grant']);
      const revoked = await revoke({ token: refreshed.body.access_token ?? '', client_id: clientId });
      expect(revoked.status).to.equal(200);
      expect(await usage(refreshed.body.access_token ?? ''), 'revoked').to.equal(401);
      const metadata = (await (await fetch(`${api()}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
      expect(metadata.revocation_endpoint).to.equal(`${String(metadata.issuer)}/oauth/revoke`);
    });

    /** A fresh authorization's first pair. */
    async function authorized(forClient = clientId, redirectUri = callback): Promise<Record<string, string>> {
      const { verifier, challenge } = verifierPair();
      const code = (await consent({ ...ask(challenge), client_id: forClient, redirect_uri: redirectUri }, account.key)).searchParams.get('code') ?? '';
      const issued = await token({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: forClient, code_verifier: verifier });
      expect(issued.status).to.equal(200);
      return issued.body;
    }
    const usage = (key: string) => fetch(`${api()}/v1/subscriptions/self/details`, { headers: { 'x-api-key': key } }).then((response) => response.status);

    it('revokes every token of the authorization when a spent refresh token comes back (RFC 9700 §4.14.2)', async () => {
      const first = await authorized();
      const second = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token ?? '', client_id: clientId });
      const third = await token({ grant_type: 'refresh_token', refresh_token: second.body.refresh_token ?? '', client_id: clientId });
      expect([second.status, third.status]).to.deep.equal([200, 200]);
      expect(await usage(third.body.access_token ?? '')).to.equal(200);
      // Another authorization of the same client and account is another family: it stays.
      const other = await authorized();

      const replayed = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token ?? '', client_id: clientId });
      expect([replayed.status, replayed.body.error]).to.deep.equal([400, 'invalid_grant']);
      expect(await usage(third.body.access_token ?? ''), 'the newest access token of the family').to.equal(401);
      const newest = await token({ grant_type: 'refresh_token', refresh_token: third.body.refresh_token ?? '', client_id: clientId });
      expect([newest.status, newest.body.error], 'the newest refresh token of the family').to.deep.equal([400, 'invalid_grant']);
      expect(await usage(other.access_token ?? ''), 'another authorization').to.equal(200);
      expect((await token({ grant_type: 'refresh_token', refresh_token: other.refresh_token ?? '', client_id: clientId })).status).to.equal(200);
    });

    it('revokes a token only for the client it was issued to; another client is refused, an unknown token answered 200', async () => {
      const otherClient = await register([callback]);
      const pair = await authorized();
      for (const held of [pair.access_token ?? '', pair.refresh_token ?? '']) {
        const foreign = await revoke({ token: held, client_id: otherClient });
        expect([foreign.status, ((await foreign.json()) as { error: string }).error]).to.deep.equal([400, 'invalid_grant']);
        const anonymous = await revoke({ token: held });
        expect([anonymous.status, ((await anonymous.json()) as { error: string }).error]).to.deep.equal([400, 'invalid_request']);
      }
      expect(await usage(pair.access_token ?? ''), 'untouched by the other client').to.equal(200);
      expect((await revoke({ token: randomBytes(32).toString('base64url'), client_id: otherClient })).status, 'unknown token').to.equal(200);
      expect((await revoke({ token: randomBytes(20).toString('hex'), client_id: otherClient })).status, 'unknown key').to.equal(200);
      // An account's own key is not an OAuth token: nothing happens to it.
      expect((await revoke({ token: account.key, client_id: clientId })).status).to.equal(200);
      expect(await usage(account.key)).to.equal(200);

      expect((await revoke({ token: pair.refresh_token ?? '', client_id: clientId })).status).to.equal(200);
      expect(await usage(pair.access_token ?? ''), 'revoked by its own client').to.equal(401);
      const refused = await token({ grant_type: 'refresh_token', refresh_token: pair.refresh_token ?? '', client_id: clientId });
      expect([refused.status, refused.body.error]).to.deep.equal([400, 'invalid_grant']);
    });

    it('refuses a redirect URI that is not registered exactly, without redirecting there', async () => {
      const { verifier, challenge } = verifierPair();
      for (const uri of [`${callback}/other`, `${callback}?x=1`, 'https://attacker.example/callback']) {
        const response = await fetch(authorizeUrl(ask(challenge, { redirect_uri: uri })), { redirect: 'manual' });
        expect(response.status, uri).to.equal(400);
        expect(response.headers.get('location'), uri).to.equal(null);
      }
      const code = (await consent(ask(challenge), account.key)).searchParams.get('code') ?? '';
      const mismatched = await token({ grant_type: 'authorization_code', code, redirect_uri: `${callback}/other`, client_id: clientId, code_verifier: verifier });
      expect([mismatched.status, mismatched.body.error]).to.deep.equal([400, 'invalid_grant']);
      const registration = await fetch(`${api()}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: ['http://attacker.example/cb'] }) });
      expect(registration.status).to.equal(400);
      expect(((await registration.json()) as { error: string }).error).to.equal('invalid_redirect_uri');
    });

    it('refuses a missing scope, a plain PKCE method and a missing challenge at the client with the state', async () => {
      const { challenge } = verifierPair();
      const cases: Array<[Record<string, string>, string]> = [
        [{ scope: '' }, 'invalid_scope'],
        [{ scope: 'api admin' }, 'invalid_scope'],
        [{ code_challenge_method: 'plain' }, 'invalid_request'],
        [{ code_challenge: '' }, 'invalid_request'],
      ];
      for (const [extra, error] of cases) {
        const response = await fetch(authorizeUrl(ask(challenge, extra)), { redirect: 'manual' });
        expect(response.status, JSON.stringify(extra)).to.equal(302);
        const location = new URL(response.headers.get('location') ?? '');
        expect(location.href.startsWith(callback)).to.equal(true);
        expect([location.searchParams.get('error'), location.searchParams.get('state')], JSON.stringify(extra)).to.deep.equal([error, 's1']);
        expect(location.searchParams.get('code')).to.equal(null);
      }
    });

    it('takes the token request only as a form, and only the authorization_code and refresh_token grants', async () => {
      const asJson = await fetch(`${api()}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ grant_type: 'authorization_code' }) });
      expect(asJson.status).to.equal(400);
      expect(((await asJson.json()) as { error: string }).error).to.equal('invalid_request');
      const password = await token({ grant_type: 'password', username: 'a', password: 'b' });
      expect([password.status, password.body.error]).to.deep.equal([400, 'unsupported_grant_type']);
    });
  });

  it('gives a token that never sees another account’s crawls', async () => {
    const other = await fetchAccount();
    const started = await fetch(`${api()}/v1/crawls`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': other.key },
      body: JSON.stringify({ url: `http://open.fixture.test:${receiver.port}/`, max_items: 1 }),
    });
    expect(started.status).to.equal(202);
    const crawlId = ((await started.json()) as { crawl_id: string }).crawl_id;

    const { verifier, challenge } = verifierPair();
    const code = (await consent({ response_type: 'code', client_id: clientId, redirect_uri: callback, scope: 'api', code_challenge: challenge, code_challenge_method: 'S256' }, account.key)).searchParams.get('code') ?? '';
    const issued = await token({ grant_type: 'authorization_code', code, redirect_uri: callback, client_id: clientId, code_verifier: verifier });
    const client = await mcpClient(issued.body.access_token ?? '');
    try {
      for (const tool of ['crawl_read', 'crawl_stop']) {
        const answer = await toolText(client, tool, { crawl_id: crawlId });
        expect(answer.isError, tool).to.equal(true);
        expect((JSON.parse(answer.text) as { code: string }).code).to.equal('crawl_not_found');
      }
    } finally {
      await client.close();
    }
  });
});
