import { expect } from 'chai';
import { chromium, type Browser } from 'playwright-core';
import { createAccountApp, createApp } from '../../api/app';
import { testStack } from '../helpers/stack';
import { openAccounts, readJson, startApp, type AccountsHandle } from '../helpers/app';

const post = async (base: string, body: string | undefined, headers: Record<string, string> = {}) => {
  const response = await fetch(`${base}/api/agent/signup`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body,
  });
  return { response, body: await readJson(response) };
};

describe('agent signup', () => {
  let handle: AccountsHandle;
  before(async () => {
    handle = await openAccounts();
  });
  after(() => handle.close());

  it('creates an account whose key works at once on the free plan, and stores provenance', async () => {
    const api = testStack().urls.api;
    const { response, body } = await post(api, '{}', { 'X-Agent-Client': 'test-agent/1.0', 'X-Agent-Origin': 'mcp' });
    expect(response.status).to.equal(201);
    expect(body.apiKey).to.match(/^[0-9a-f]{40}$/);
    expect(body.accountId).to.be.a('string');
    expect(body.claimUrl).to.match(new RegExp(`/claim/${String(body.accountId)}/[0-9a-f]{48}$`));
    const now = new Date();
    expect(body.trialEndsAt).to.equal(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString());

    const details = await fetch(`${api}/v1/subscriptions/self/details`, { headers: { 'X-API-Key': String(body.apiKey) } });
    expect(details.status).to.equal(200);
    const plan = (await readJson(details)).plan as { name: string; products: { api: { limit: number } } };
    expect(plan.name).to.equal('free');
    expect(plan.products.api.limit).to.equal(5000);
    const account = await fetch(`${api}/api/agent/account`, { headers: { 'X-API-Key': String(body.apiKey) } });
    expect(await readJson(account)).to.deep.equal({ accountId: body.accountId, claimed: false, isAgent: true });

    const stored = await handle.accounts.store.account(String(body.accountId));
    expect(stored?.provenance).to.include({ client: 'test-agent/1.0', origin: 'mcp' });
  });

  it('refuses bodies that are not JSON objects and unknown fields, creating nothing', async () => {
    const api = testStack().urls.api;
    const before = await handle.db.db.collection('accounts').countDocuments();
    for (const [body, error] of [
      ['[]', 'invalid_request'],
      ['"x"', 'invalid_request'],
      ['{"a":', 'invalid_request'],
      ['{"plan":"business"}', 'unknown_parameter'],
      ['{"client": 5}', 'invalid_parameter'],
    ] as const) {
      const answer = await post(api, body);
      expect(answer.response.status, body).to.equal(400);
      expect(answer.body.error, body).to.equal(error);
      expect(answer.body.message).to.be.a('string');
    }
    expect(await handle.db.db.collection('accounts').countDocuments()).to.equal(before);
  });

  it('limits signups per client network with 429 {error: "rate_limited"}, exactly under concurrency', async () => {
    const app = await startApp(undefined, { env: { SIGNUP_RATE_LIMIT: '3', TRUST_PROXY: 'true' } });
    try {
      const from = (address: string) => ({ 'X-Forwarded-For': address });
      const burst = await Promise.all(Array.from({ length: 10 }, () => post(app.url, '{}', from('198.51.100.7'))));
      expect(burst.filter((answer) => answer.response.status === 201)).to.have.length(3);
      const limited = burst.find((answer) => answer.response.status === 429);
      expect(limited?.body.error).to.equal('rate_limited');
      expect(limited?.body.message).to.be.a('string');
      expect(Number(limited?.response.headers.get('retry-after'))).to.be.greaterThan(0);
      expect((await post(app.url, '{}', from('198.51.100.200'))).response.status, 'same /24').to.equal(429);
      expect((await post(app.url, '{}', from('203.0.113.9'))).response.status, 'another network').to.equal(201);
      expect((await post(app.url, '{}', from('2001:db8:1:2::5'))).response.status).to.equal(201);
    } finally {
      await app.close();
    }
  });

  it('moves the account surfaces to their own listener with APP_PORT', async () => {
    const env = { APP_PORT: '18765' };
    const main = await startApp(undefined, { env, app: (deps) => createApp(deps).callback() });
    const accountsApp = await startApp(undefined, { env, app: (deps) => createAccountApp(deps).callback() });
    try {
      expect((await post(main.url, '{}')).response.status).to.equal(404);
      const { response, body } = await post(accountsApp.url, '{}');
      expect(response.status).to.equal(201);
      expect(body.claimUrl).to.match(/^http:\/\/localhost:18765\/claim\//);
      const usage = await fetch(`${main.url}/v1/subscriptions/self/details`, { headers: { 'X-API-Key': String(body.apiKey) } });
      expect(usage.status).to.equal(200);
    } finally {
      await main.close();
      await accountsApp.close();
    }
  });

  describe('claim page, in headless Chromium', () => {
    let browser: Browser;
    before(async () => {
      const executablePath = testStack().component('worker').spec.env.CHROMIUM_PATH;
      browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu'] });
    });
    after(() => browser.close());

    it('lets a person take ownership with an email while the same key keeps working', async () => {
      const api = testStack().urls.api;
      const { body } = await post(api, '{}');
      const key = String(body.apiKey);
      // The link names localhost; the test browser reaches the same listener on 127.0.0.1.
      const claimUrl = String(body.claimUrl).replace(/^http:\/\/localhost:\d+/, api);
      const page = await browser.newPage();
      try {
        await page.goto(claimUrl);
        expect(await page.title()).to.match(/Claim your account/);
        // Passes the browser's own check of type=email, not the service's (no dot in the domain).
        await page.fill('#email', 'owner@localhost');
        await page.click('button[type=submit]');
        await page.waitForSelector('.error');
        expect(await page.textContent('.error')).to.match(/valid email/);
        await page.fill('#email', 'Owner@Example.com');
        await page.click('button[type=submit]');
        await page.waitForSelector('h1:has-text("Account claimed")');
        expect(await page.textContent('body')).to.include('owner@example.com');
        await page.goto(claimUrl);
        expect(await page.textContent('h1')).to.equal('Account claimed');
        await page.goto(claimUrl.replace(/[0-9a-f]{4}$/, '0000'));
        expect(await page.textContent('h1')).to.equal('Claim link not valid');
      } finally {
        await page.close();
      }
      const account = await fetch(`${api}/api/agent/account`, { headers: { 'X-API-Key': key } });
      expect(await readJson(account)).to.deep.equal({ accountId: body.accountId, claimed: true, isAgent: true });
      const usage = await fetch(`${api}/v1/subscriptions/self/details`, { headers: { 'X-API-Key': key } });
      expect(usage.status).to.equal(200);
      // A second claim, with another address, changes nothing.
      const again = await fetch(claimUrl, { method: 'POST', body: new URLSearchParams({ email: 'thief@example.com' }) });
      expect(await again.text()).to.include('owner@example.com');
      expect((await handle.accounts.store.account(String(body.accountId)))?.email).to.equal('owner@example.com');
    });
  });
});
