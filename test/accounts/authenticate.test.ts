import { expect } from 'chai';
import { authenticate, KEY_RULES, principalOf, type Surface } from '../../api/auth/authenticate';
import type { Route } from '../../api/http/routes';
import { generateApiKey } from '../../core/accounts/keys';
import { newAccount, readJson, startApp, type TestAccount, type TestApp } from '../helpers/app';

const SURFACES = Object.keys(KEY_RULES) as Surface[];

/** One protected route per surface, answering the principal's account id. */
const surfaceRoutes = (deps: Parameters<typeof authenticate>[0]): Route[] =>
  SURFACES.map((surface) => ({
    method: 'GET',
    path: `/t/${surface}`,
    operationId: `t_${surface}`,
    summary: surface,
    tags: ['test'],
    before: [authenticate(deps, surface)],
    responses: { 200: { description: 'ok' } },
    handler(ctx) {
      ctx.body = { accountId: principalOf(ctx).accountId, keyId: principalOf(ctx).keyId };
    },
  }));

const codes = (surface: Surface) =>
  KEY_RULES[surface].failures === 'codes'
    ? { missing: 'AUTH001', malformed: 'AUTH002', notFound: 'AUTH003' }
    : { missing: 'unauthenticated', malformed: 'unauthenticated', notFound: 'unauthenticated' };

describe('authentication middleware, per surface', () => {
  let app: TestApp;
  let account: TestAccount;
  const logLines: string[] = [];

  before(async () => {
    app = await startApp((deps) => surfaceRoutes(deps), { sink: (line) => logLines.push(line) });
    account = await newAccount(app.accounts);
  });
  after(() => app.close());

  /** Calls a surface's route with the key in the header and/or the query. */
  async function call(surface: Surface, placement: { header?: string; query?: string; queryName?: string }) {
    const url = new URL(`${app.url}/t/${surface}`);
    if (placement.query !== undefined) url.searchParams.set(placement.queryName ?? 'apikey', placement.query);
    const headers: Record<string, string> = placement.header !== undefined ? { 'X-API-Key': placement.header } : {};
    const response = await fetch(url, { headers });
    return { response, body: await readJson(response) };
  }

  async function expectFailure(surface: Surface, placement: Parameters<typeof call>[1], code: string) {
    const { response, body } = await call(surface, placement);
    expect(response.status, `${surface} ${JSON.stringify(placement).slice(0, 80)}`).to.equal(401);
    expect(response.headers.get('content-type')).to.equal('application/problem+json');
    expect(body.code).to.equal(code);
    expect(body.title).to.match(new RegExp(`\\(${code}\\)$`));
    expect(String(body.detail)).to.be.a('string').and.not.equal('');
  }

  for (const surface of SURFACES) {
    const rule = KEY_RULES[surface];
    const { missing, malformed, notFound } = codes(surface);

    describe(`${surface} (${[rule.query && 'query', rule.header && 'header'].filter(Boolean).join(' or ')})`, () => {
      it('accepts the key where the surface takes it', async () => {
        if (rule.query) {
          const { response, body } = await call(surface, { query: account.key });
          expect(response.status).to.equal(200);
          expect(body.accountId).to.equal(account.accountId);
        }
        if (rule.header) {
          const { response, body } = await call(surface, { header: account.key.toUpperCase() });
          expect(response.status).to.equal(200);
          expect(body.keyId).to.equal(account.keyId);
        }
      });

      it(`answers ${missing} when the key is missing, or only where this surface does not read it`, async () => {
        await expectFailure(surface, {}, missing);
        if (!rule.query && !rule.refuseInUrl) await expectFailure(surface, { query: account.key }, missing);
        if (!rule.header) await expectFailure(surface, { header: account.key }, missing);
      });

      it(`answers ${malformed} for malformed keys, however long`, async () => {
        const place = (key: string) => (rule.header ? { header: key } : { query: key });
        for (const key of ['abc', account.key.slice(1), `${account.key}0`, 'g'.repeat(40), ` ${account.key.slice(1)}`, 'a'.repeat(10_000)]) {
          await expectFailure(surface, place(key), malformed);
        }
        if (rule.query && rule.header) await expectFailure(surface, { header: account.key, query: generateApiKey() }, malformed);
      });

      it(`answers ${notFound} for unknown keys, revoked keys and keys of deleted accounts`, async () => {
        const place = (key: string) => (rule.header ? { header: key } : { query: key });
        await expectFailure(surface, place(generateApiKey()), notFound);
        const revoked = await newAccount(app.accounts);
        expect((await call(surface, place(revoked.key))).response.status).to.equal(200);
        await app.accounts.store.revokeKey(revoked.keyId);
        app.accounts.keys.forget(revoked.accountId);
        await expectFailure(surface, place(revoked.key), notFound);
        const deleted = await newAccount(app.accounts);
        await app.accounts.store.deleteAccount(deleted.accountId);
        app.accounts.keys.forget(deleted.accountId);
        await expectFailure(surface, place(deleted.key), notFound);
      });
    });
  }

  it('refuses a Batch key sent in the URL, even with a valid header, and never logs it', async () => {
    for (const name of ['apikey', 'api_key', 'apiKey', 'x-api-key']) {
      logLines.length = 0;
      await expectFailure('batch', { header: account.key, query: account.key, queryName: name }, 'unauthenticated');
      const { body } = await call('batch', { query: account.key, queryName: name });
      expect(String(body.detail)).to.match(/X-API-Key header/);
      expect(logLines.length, 'the access log wrote lines').to.be.greaterThan(0);
      expect(logLines.join('\n')).not.to.include(account.key);
    }
  });

  it('keeps other keys of the account working when one is revoked, and caps an account at 10 active keys', async () => {
    const owner = await newAccount(app.accounts);
    for (let n = 1; n < 10; n++) await app.accounts.store.createKey(owner.accountId);
    let refusal: unknown;
    await app.accounts.store.createKey(owner.accountId).catch((error: unknown) => (refusal = error));
    expect((refusal as { reason?: string }).reason).to.equal('too_many_keys');
    await app.accounts.store.revokeKey(owner.keyId);
    app.accounts.keys.forget(owner.accountId);
    const replacement = await app.accounts.store.createKey(owner.accountId);
    expect((await call('crawl', { header: replacement.key })).response.status).to.equal(200);
    await expectFailure('crawl', { header: owner.key }, 'AUTH003');
  });

  it('never makes an eleventh key when keys are created concurrently from two processes', async () => {
    const other = await startApp(undefined);
    try {
      const owner = await newAccount(app.accounts);
      const attempts = await Promise.allSettled(
        Array.from({ length: 16 }, (_, n) => (n % 2 ? app : other).accounts.store.createKey(owner.accountId)),
      );
      expect(attempts.filter((attempt) => attempt.status === 'fulfilled')).to.have.length(9);
      const active = (await app.accounts.store.listKeys(owner.accountId)).filter((key) => !key.revoked_at);
      expect(active).to.have.length(10);
    } finally {
      await other.close();
    }
  });

  it('stores only the SHA-256 of a key', async () => {
    const stored = await app.db.db.collection('api_keys').find({ account_id: account.accountId }).toArray();
    expect(stored).to.have.length(1);
    expect(JSON.stringify(stored)).not.to.include(account.key);
  });
});
