import { expect } from 'chai';
import { startWebhookReceiver, type WebhookReceiver } from '../fixtures/webhook-receiver';
import { batchRequest, openAccounts, pythonVerifies, webhookAccount, type AccountsHandle, type TestAccount } from './helpers';

describe('POST /v1/webhook/test', () => {
  let handle: AccountsHandle;
  let account: TestAccount;
  let receiver: WebhookReceiver;

  before(async () => {
    handle = await openAccounts();
    account = await webhookAccount(handle);
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await receiver.close();
    await handle.close();
  });
  beforeEach(() => {
    receiver.deliveries.length = 0;
    receiver.script = {};
  });

  const test = (body: unknown, key = account.key) => batchRequest(key, 'POST', '/v1/webhook/test', body);

  it('delivers an unsigned webhook.test event and reports the answer', async () => {
    const answer = await test({ url: receiver.url() });
    expect(answer.status).to.equal(200);
    expect(answer.body).to.include({ delivered: true, status_code: 200 });
    expect(answer.body.elapsed_ms).to.be.a('number');
    const [delivery] = receiver.deliveries;
    expect(delivery?.headers['user-agent']).to.equal('service-webhook/v1');
    expect(delivery?.headers['content-type']).to.equal('application/json');
    expect(delivery?.headers['x-service-event-id']).to.equal(answer.body.event_id);
    expect(delivery?.headers['x-signature']).to.equal(undefined);
    const event = JSON.parse(delivery?.body.toString() ?? '{}') as Record<string, unknown>;
    expect(event).to.include({ schema: 'service.webhook/v1', event_type: 'webhook.test', event_id: answer.body.event_id, job_id: 'test', run_id: 'test', run_sequence: 1 });
  });

  it('signs like real deliveries: Python’s hmac verifies the raw bytes with the active secret', async () => {
    const refused = await test({ url: receiver.url(), signature: true });
    expect([refused.status, refused.body.code]).to.deep.equal([400, 'webhook_signing_requires_active_key']);
    expect(receiver.deliveries).to.have.length(0);

    const key = await batchRequest(account.key, 'POST', '/v1/hmac/keys/rotate');
    const answer = await test({ url: receiver.url(), signature: true });
    expect(answer.body.delivered).to.equal(true);
    const [delivery] = receiver.deliveries;
    const signature = String(delivery?.headers['x-signature']);
    expect(signature).to.match(new RegExp(`^t=\\d+,v1=[0-9a-f]{64},kid=${key.body.kid as string}$`));
    expect(pythonVerifies(delivery!.body, signature, { [key.body.kid as string]: key.body.secret as string })).to.equal(true);
    // A byte changed, or another secret, does not verify.
    const tampered = Buffer.from(delivery!.body);
    tampered[tampered.length - 2] = 0x20;
    expect(pythonVerifies(tampered, signature, { [key.body.kid as string]: key.body.secret as string })).to.equal(false);
    expect(pythonVerifies(delivery!.body, signature, { [key.body.kid as string]: Buffer.alloc(32, 1).toString('base64') })).to.equal(false);
  });

  it('reports a receiver’s error status, a time-out and an untrusted certificate in the body, with status 200', async () => {
    receiver.script = { statuses: [503] };
    const failed = await test({ url: receiver.url() });
    expect(failed.status).to.equal(200);
    expect(failed.body).to.include({ delivered: false, status_code: 503, error: 'http_5xx:503' });

    receiver.script = { delayMs: 3_000 };
    const slow = await test({ url: receiver.url() });
    expect(slow.body).to.include({ delivered: false, error: 'timeout' });
    expect(slow.body).to.not.have.property('status_code');

    // `localhost` is allowed in tests but not named in the certificate.
    receiver.script = {};
    const mismatched = await test({ url: `https://localhost:${receiver.port}/hook` });
    expect(mismatched.body).to.include({ delivered: false, error: 'tls' });
  });

  it('does not follow a redirect, even to an allowed address', async () => {
    const target = await startWebhookReceiver();
    try {
      receiver.script = { statuses: [302], location: target.url('/elsewhere') };
      const answer = await test({ url: receiver.url() });
      expect(answer.body).to.include({ delivered: false, status_code: 302, error: 'http_3xx:302' });
      expect(target.deliveries).to.have.length(0);
    } finally {
      await target.close();
    }
  });

  it('refuses http, private and loopback spellings outside the allow-list, and bodies that are not valid', async () => {
    const http = await test({ url: `http://127.0.0.1:${receiver.port}/hook` });
    expect([http.status, http.body.code]).to.deep.equal([400, 'callback_url_must_be_https']);
    for (const url of [
      'https://10.0.0.1/hook',
      'https://169.254.169.254/latest',
      'https://127.0.0.2/hook',
      'https://0x7f000002/hook',
      'https://[::ffff:127.0.0.2]/hook',
      'https://[fd00::1]/hook',
      'https://metadata.google.internal/hook',
      'https://user:pass@127.0.0.1/hook',
    ]) {
      const answer = await test({ url });
      expect([answer.status, answer.body.code], url).to.deep.equal([400, 'invalid_argument']);
    }
    const unresolvable = await test({ url: 'https://nothing-here.invalid/hook' });
    expect([unresolvable.status, unresolvable.body.code]).to.deep.equal([400, 'callback_url_unresolvable']);
    for (const body of [{}, { url: 'not a url' }, { url: receiver.url(), extra: 1 }, { url: receiver.url(), signature: 'yes' }]) {
      const answer = await test(body);
      expect([answer.status, answer.body.code], JSON.stringify(body)).to.deep.equal([400, 'invalid_argument']);
    }
    expect(receiver.deliveries).to.have.length(0);
  });
});
