import { expect } from 'chai';
import { HMAC_KEYS } from '../../core/webhooks/hmac-keys';
import { batchRequest, openAccounts, webhookAccount, type AccountsHandle, type TestAccount } from './helpers';

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

describe('HMAC signing keys (/v1/hmac/keys)', () => {
  let handle: AccountsHandle;
  let account: TestAccount;

  before(async () => {
    handle = await openAccounts();
    account = await webhookAccount(handle);
  });
  after(async () => handle.close());

  it('creates the active key, stages, cancels and finalizes a candidate, never showing a secret twice', async () => {
    expect((await batchRequest(account.key, 'GET', '/v1/hmac/keys')).body).to.deep.equal({ active: null, candidate: null });

    const first = await batchRequest(account.key, 'POST', '/v1/hmac/keys/rotate');
    expect(first.status).to.equal(201);
    expect(first.body.kid).to.match(ULID);
    expect(Buffer.from(first.body.secret as string, 'base64')).to.have.length(32);
    expect(first.headers.get('cache-control')).to.equal('no-store');

    const staged = await batchRequest(account.key, 'POST', '/v1/hmac/keys/rotate');
    expect(staged.status).to.equal(201);
    expect(staged.body.kid).to.not.equal(first.body.kid);
    const listed = await batchRequest(account.key, 'GET', '/v1/hmac/keys');
    expect(listed.body.active.kid).to.equal(first.body.kid);
    expect(listed.body.candidate.kid).to.equal(staged.body.kid);

    const again = await batchRequest(account.key, 'POST', '/v1/hmac/keys/rotate');
    expect(again.status).to.equal(409);
    expect(again.body.code).to.equal('candidate_pending');

    expect((await batchRequest(account.key, 'DELETE', '/v1/hmac/keys/rotate')).status).to.equal(204);
    expect((await batchRequest(account.key, 'GET', '/v1/hmac/keys')).body.candidate).to.equal(null);
    const cancelTwice = await batchRequest(account.key, 'DELETE', '/v1/hmac/keys/rotate');
    expect([cancelTwice.status, cancelTwice.body.code]).to.deep.equal([409, 'no_candidate']);

    const next = await batchRequest(account.key, 'POST', '/v1/hmac/keys/rotate');
    const finalized = await batchRequest(account.key, 'POST', '/v1/hmac/keys/rotate/finalize');
    expect(finalized.status).to.equal(200);
    expect(finalized.body).to.deep.equal({ active_kid: next.body.kid, created_at: next.body.created_at });
    const after = await batchRequest(account.key, 'GET', '/v1/hmac/keys');
    expect(after.body).to.deep.equal({ active: { kid: next.body.kid, created_at: next.body.created_at }, candidate: null });
    const finalizeTwice = await batchRequest(account.key, 'POST', '/v1/hmac/keys/rotate/finalize');
    expect([finalizeTwice.status, finalizeTwice.body.code]).to.deep.equal([409, 'no_candidate']);

    // At rest the secrets are sealed: no stored document holds one in any encoding.
    const stored = JSON.stringify(await handle.db.db.collection(HMAC_KEYS).find({ account_id: account.accountId }).toArray());
    for (const secret of [first.body.secret, staged.body.secret, next.body.secret] as string[]) {
      expect(stored).to.not.include(secret);
      expect(stored).to.not.include(Buffer.from(secret, 'base64').toString('hex'));
    }
  });

  it('keeps each account’s keys to itself', async () => {
    const other = await webhookAccount(handle);
    await batchRequest(other.key, 'POST', '/v1/hmac/keys/rotate');
    const mine = await batchRequest(account.key, 'GET', '/v1/hmac/keys');
    const theirs = await batchRequest(other.key, 'GET', '/v1/hmac/keys');
    expect(theirs.body.active.kid).to.not.equal(mine.body.active.kid);
  });

  it('takes the key only in X-API-Key, as the Batch surface does', async () => {
    const inQuery = await batchRequest(null, 'GET', `/v1/hmac/keys?apikey=${account.key}`);
    expect([inQuery.status, inQuery.body.code]).to.deep.equal([401, 'unauthenticated']);
    const missing = await batchRequest(null, 'POST', '/v1/hmac/keys/rotate');
    expect([missing.status, missing.body.code]).to.deep.equal([401, 'unauthenticated']);
  });
});
