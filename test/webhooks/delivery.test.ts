import { expect } from 'chai';
import { connectTemporal, type TemporalHandle } from '../../base/temporal';
import { startDelivery, webhookRetry, webhookWorkflowId } from '../../core/webhooks/deliveries';
import { createWebhookEvents, WEBHOOK_ATTEMPTS, type RunEnd } from '../../core/webhooks/events';
import { startWebhookReceiver, type WebhookReceiver } from '../fixtures/webhook-receiver';
import { eventually, testStack } from '../helpers/stack';
import { batchRequest, openAccounts, pythonVerifies, webhookAccount, type AccountsHandle, type TestAccount } from './helpers';

describe('webhook delivery workflow', () => {
  let handle: AccountsHandle;
  let account: TestAccount;
  let temporal: TemporalHandle;
  let secret: { kid: string; secret: string };
  let sequence = 0;

  before(async () => {
    handle = await openAccounts();
    account = await webhookAccount(handle);
    temporal = connectTemporal(handle.config);
    const created = await batchRequest(account.key, 'POST', '/v1/hmac/keys/rotate');
    secret = { kid: created.body.kid as string, secret: created.body.secret as string };
  });
  after(async () => {
    await temporal.close();
    await handle.close();
  });

  /** Records a run's end as Batch does and starts its delivery. */
  async function deliver(receiver: WebhookReceiver, overrides: Partial<RunEnd> = {}) {
    sequence += 1;
    const events = createWebhookEvents(handle.db.db);
    const event = await events.recordRunEnd({
      accountId: account.accountId,
      jobId: `job_delivery_${process.pid}`,
      runId: `run_${sequence}`,
      runSequence: sequence,
      eventType: 'run.completed',
      stats: { total: 3, completed: 3, successful: 3, failed: 0, spend: { credits: 3, cost: 0 } },
      webhook: { url: receiver.url(), signature: true },
      ...overrides,
    });
    await startDelivery(temporal.client, handle.config.temporalTaskQueue, { key: event._id, eventId: event.event_id }, webhookRetry(handle.config));
    return { event, result: () => temporal.client.workflow.getHandle(webhookWorkflowId(event.event_id)).result() };
  }

  it('retries a failing receiver until it answers 2xx: one event id, the same bytes, every attempt recorded and signed', async () => {
    const receiver = await startWebhookReceiver({ statuses: [500, 502, 503, 200] });
    try {
      const { event, result } = await deliver(receiver, {
        eventType: 'run.failed',
        failure: { reason: 'insufficient_credits', detail: 'Crédits épuisés — 残高が不足しています' },
      });
      expect(await result()).to.deep.equal({ delivered: true, attempts: 4 });
      expect(receiver.deliveries).to.have.length(4);
      for (const delivery of receiver.deliveries) {
        expect(delivery.headers['x-service-event-id']).to.equal(event.event_id);
        expect(delivery.body.equals(receiver.deliveries[0]!.body)).to.equal(true);
        expect(pythonVerifies(delivery.body, String(delivery.headers['x-signature']), { [secret.kid]: secret.secret })).to.equal(true);
      }
      const body = JSON.parse(receiver.deliveries[0]!.body.toString('utf8')) as Record<string, unknown>;
      expect(body).to.include({ event_type: 'run.failed', failure_reason: 'insufficient_credits', failure_detail: 'Crédits épuisés — 残高が不足しています' });
      const stored = await createWebhookEvents(handle.db.db).get(event._id);
      expect(stored).to.include({ state: 'delivered', attempts: 4, last_status_code: 200 });
      const attempts = await handle.db.db.collection(WEBHOOK_ATTEMPTS).find({ event_id: event.event_id }).sort({ attempt: 1 }).toArray();
      expect(attempts.map((attempt) => [attempt.attempt, attempt.status_code, attempt.error])).to.deep.equal([
        [1, 500, 'http_5xx:500'],
        [2, 502, 'http_5xx:502'],
        [3, 503, 'http_5xx:503'],
        [4, 200, undefined],
      ]);
    } finally {
      await receiver.close();
    }
  });

  it('delivers after the worker is killed between attempts, with the same event id and body', async () => {
    const down = await startWebhookReceiver();
    const port = down.port;
    await down.close();
    // Nothing listens: every attempt fails until the receiver comes back on the same port.
    const { event, result } = await deliver({ ...down, url: (path = '/hook') => `https://127.0.0.1:${port}${path}` });
    const events = createWebhookEvents(handle.db.db);
    await eventually(async () => ((await events.get(event._id))?.attempts ?? 0) >= 2);
    await testStack().component('worker').kill();
    const receiver = await startWebhookReceiver({}, port);
    try {
      await testStack().component('worker').start();
      expect((await result()).delivered).to.equal(true);
      expect(receiver.deliveries).to.have.length(1);
      expect(receiver.deliveries[0]!.headers['x-service-event-id']).to.equal(event.event_id);
      expect(receiver.deliveries[0]!.body.toString('utf8')).to.equal(event.body);
      const stored = await events.get(event._id);
      expect(stored?.state).to.equal('delivered');
      expect(stored?.attempts).to.be.greaterThan(2);
    } finally {
      await receiver.close();
    }
  });

  it('writes a run’s end event once however often the run’s end is recorded', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const events = createWebhookEvents(handle.db.db);
      const end: RunEnd = {
        accountId: account.accountId,
        jobId: `job_once_${process.pid}`,
        runId: 'run_once',
        runSequence: 1,
        eventType: 'run.completed',
        stats: { total: 1, completed: 1, successful: 1, failed: 0, spend: { credits: 1, cost: 0 } },
        webhook: { url: receiver.url(), signature: false },
      };
      const first = await events.recordRunEnd(end);
      const second = await events.recordRunEnd(end);
      expect(second.event_id).to.equal(first.event_id);
      expect(second.body).to.equal(first.body);
    } finally {
      await receiver.close();
    }
  });
});
