/**
 * Well-formed random API keys: each missed every cache and cost a database look-up, with no account
 * budget to stop them (444/s from one client slowed every other tenant). Failed look-ups are limited
 * per client network now, before the database: a flood of random keys gets 401 until its network's
 * allowance is spent, then 429, and costs at most that allowance in look-ups. Those 429s are held a
 * moment (a few at once per network, the rest answered at once) and close their connections, so a
 * flood cannot make the API answer refusals as fast as it sends them either. Counted twice: by the
 * API's /metrics and by the store's key look-up itself, instrumented in place (the database is real).
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { newAccount, startApp, type TestApp } from '../helpers/app';
import { operatorHeaders } from '../helpers/stack';

const BURST = 10;

describe('hardening: floods of random API keys', function () {
  this.timeout(120_000);
  let app: TestApp;
  let storeLookUps = 0;

  before(async () => {
    // No refill during the test, a key cache longer than it, and client networks told by X-Forwarded-For.
    app = await startApp(undefined, { env: { AUTH_FAILURE_BURST: String(BURST), AUTH_FAILURES_PER_MINUTE: '0', KEY_CACHE_TTL_MS: '600000', TRUST_PROXY: 'true' } });
    const store = app.accounts.store;
    const keyByDigest = store.keyByDigest.bind(store);
    store.keyByDigest = (digest) => {
      storeLookUps++;
      return keyByDigest(digest);
    };
  });
  after(() => app?.close());

  const from = (address: string, key: string, path = '/v1/subscriptions/self/details') => fetch(`${app.url}${path}`, { headers: { 'X-API-Key': key, 'X-Forwarded-For': address } });
  const metric = async (name: string): Promise<number> => {
    const text = await (await fetch(`${app.url}/metrics`, { headers: operatorHeaders() })).text();
    return text
      .split('\n')
      .filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`))
      .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
  };

  it('answers 401 until the network’s allowance of failed look-ups is spent, then 429 before any look-up', async () => {
    const known = await newAccount(app.accounts);
    const fresh = await newAccount(app.accounts);
    // A valid key used before the flood is cached: the flood never touches it.
    expect((await from('198.51.100.20', known.key)).status).to.equal(200);
    const before = { store: storeLookUps, metrics: await metric('fetchplane_api_key_lookups') };

    const statuses: number[] = [];
    for (let round = 0; round < 10; round++) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, async () => {
          const response = await from(`198.51.100.${1 + (round % 200)}`, randomBytes(20).toString('hex'));
          const body = (await response.json()) as Record<string, unknown>;
          if (response.status === 429) {
            expect(body).to.include({ code: 'rate_limited', limit: 'auth_failures' });
            expect(response.headers.get('retry-after')).to.match(/^\d+$/);
          } else expect(body.code).to.equal('AUTH003');
          return response.status;
        }),
      );
      statuses.push(...answers);
    }
    expect(statuses.filter((status) => status === 401)).to.have.length(BURST);
    expect(statuses.filter((status) => status === 429)).to.have.length(200 - BURST);
    expect(statuses.slice(-100).every((status) => status === 429), 'the flood ends refused').to.equal(true);

    // 200 random keys cost the burst in look-ups, by the store's own count and by /metrics.
    expect(storeLookUps - before.store, 'look-ups in the store').to.equal(BURST);
    expect((await metric('fetchplane_api_key_lookups')) - before.metrics, 'look-ups in /metrics').to.equal(BURST);
    expect(await metric('fetchplane_api_key_lookups_refused')).to.equal(200 - BURST);

    // The same network's cached valid key still works, and so does a new key from another network.
    expect((await from('198.51.100.20', known.key)).status).to.equal(200);
    expect((await from('203.0.113.9', fresh.key)).status).to.equal(200);
    // The Fetch surface refuses the same way, before any look-up.
    const fetchRefused = await from('198.51.100.7', 'x', `/v1/?apikey=${randomBytes(20).toString('hex')}&url=http://127.0.0.1:9/`);
    expect(fetchRefused.status).to.equal(429);
    expect(storeLookUps - before.store, 'look-ups in the store at the end').to.equal(BURST + 1);
  });

  it('remembers an unknown key, so repeating it answers 401 without a look-up and without wearing the allowance down', async () => {
    const unknown = randomBytes(20).toString('hex');
    const first = await from('192.0.2.10', unknown);
    expect(first.status).to.equal(401);
    const looked = storeLookUps;
    for (let n = 0; n < 50; n++) expect((await from('192.0.2.10', unknown)).status, `repeat ${n}`).to.equal(401);
    expect(storeLookUps).to.equal(looked);
    // The network spent one failure of its allowance, not 51.
    const next = await Promise.all(Array.from({ length: BURST - 1 }, () => from('192.0.2.11', randomBytes(20).toString('hex'))));
    expect(next.map((response) => response.status)).to.deep.equal(Array.from({ length: BURST - 1 }, () => 401));
  });

  it('holds a flooding network’s refusals before answering them, at most so many at once, and closes their connections', async () => {
    // One failed look-up allowed, refusals held longer than the test needs, two at once per network.
    const held = await startApp(undefined, {
      env: { AUTH_FAILURE_BURST: '1', AUTH_FAILURES_PER_MINUTE: '0', AUTH_FAILURE_HOLD_MS: '5000', AUTH_FAILURE_HOLDS_PER_NETWORK: '2', KEY_CACHE_TTL_MS: '600000', TRUST_PROXY: 'true' },
    });
    try {
      const at = (address: string, key: string) => fetch(`${held.url}/v1/subscriptions/self/details`, { headers: { 'X-API-Key': key, 'X-Forwarded-For': address } });
      const heldNow = async (): Promise<number> => {
        const text = await (await fetch(`${held.url}/metrics`, { headers: operatorHeaders() })).text();
        return Number(text.split('\n').find((line) => line.startsWith('fetchplane_api_key_refusals_held '))?.split(' ').pop() ?? NaN);
      };
      const account = await newAccount(held.accounts);
      expect((await at('198.51.100.60', account.key)).status).to.equal(200);
      expect((await at('198.51.100.61', randomBytes(20).toString('hex'))).status, 'the one failure allowed').to.equal(401);

      // Two refusals of the network are held: unanswered while the rest below is answered.
      let answered = 0;
      const holding = [0, 1].map(() =>
        at('198.51.100.62', randomBytes(20).toString('hex')).then((response) => {
          answered++;
          return response;
        }),
      );
      for (let poll = 0; poll < 200 && (await heldNow()) < 2; poll++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(await heldNow(), 'refusals held').to.equal(2);

      // The third is past the network's holds: answered at once, the same 429, and its connection ends.
      const third = await at('198.51.100.63', randomBytes(20).toString('hex'));
      expect(third.status).to.equal(429);
      const thirdBody = (await third.json()) as { detail: string };
      expect(thirdBody).to.include({ code: 'rate_limited', limit: 'auth_failures' });
      expect(third.headers.get('retry-after')).to.match(/^\d+$/);
      // The detail words the wait as the header gives it: "1 second", never "1 seconds".
      const wait = Number(third.headers.get('retry-after'));
      expect(thirdBody.detail).to.contain(`retry in ${wait} ${wait === 1 ? 'second' : 'seconds'}.`);
      expect(third.headers.get('connection')).to.equal('close');
      // So is a token no cache knows at /mcp.
      const mcp = await fetch(`${held.url}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${randomBytes(20).toString('hex')}`, 'X-Forwarded-For': '198.51.100.65', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: '{}',
      });
      expect(mcp.status).to.equal(429);
      expect(await mcp.json()).to.include({ error: 'rate_limited' });
      expect(mcp.headers.get('connection')).to.equal('close');
      // The network's cached valid key and another network's keys are not held behind them.
      expect((await at('198.51.100.64', account.key)).status).to.equal(200);
      expect((await at('203.0.113.70', randomBytes(20).toString('hex'))).status).to.equal(401);
      expect(answered, 'held refusals answered before the others').to.equal(0);

      for (const response of await Promise.all(holding)) {
        expect(response.status).to.equal(429);
        expect(await response.json()).to.include({ code: 'rate_limited', limit: 'auth_failures' });
        expect(response.headers.get('connection')).to.equal('close');
      }
      expect(await heldNow()).to.equal(0);
    } finally {
      await held.close();
    }
  });

  it('keeps serving a valid key its network has used before, after its cache entry expired, while that network floods unknown keys', async () => {
    // A key cache of a moment: the valid key has to be looked up again after the flood.
    const short = await startApp(undefined, { env: { AUTH_FAILURE_BURST: String(BURST), AUTH_FAILURES_PER_MINUTE: '0', KEY_CACHE_TTL_MS: '200', TRUST_PROXY: 'true' } });
    try {
      const account = await newAccount(short.accounts);
      const at = (key: string) => fetch(`${short.url}/v1/subscriptions/self/details`, { headers: { 'X-API-Key': key, 'X-Forwarded-For': '198.51.100.50' } });
      expect((await at(account.key)).status).to.equal(200);
      const flood = await Promise.all(Array.from({ length: 2 * BURST }, () => at(randomBytes(20).toString('hex'))));
      expect(flood.map((response) => response.status)).to.include(429);
      await new Promise((resolve) => setTimeout(resolve, 400));
      // Its entry expired: it is looked up again, and a key found valid before is not held to the network's failures.
      expect((await at(account.key)).status).to.equal(200);
      // A key never seen by this process is still refused there before any look-up.
      const fresh = await newAccount(short.accounts);
      expect((await at(fresh.key)).status).to.equal(429);
    } finally {
      await short.close();
    }
  });
});
