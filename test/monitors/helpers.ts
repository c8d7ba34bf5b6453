/** Monitors through the running service: an account with an HMAC key, `/v1/monitors` calls, checks waited for, events read. */
import { expect } from 'chai';
import { accountsHandle } from '../crawls/helpers';
import { newAccount, type TestAccount } from '../helpers/app';
import { eventually } from '../helpers/stack';
import { batchRequest, pythonVerifies, type Answer, type Json } from '../webhooks/helpers';
import type { WebhookReceiver } from '../fixtures/webhook-receiver';

export interface MonitorAccount extends TestAccount {
  secret: { kid: string; secret: string };
}

export async function monitorAccount(options: { plan?: string } = {}): Promise<MonitorAccount> {
  const account = await newAccount((await accountsHandle()).accounts, { credits: 1_000_000, ...options });
  const created = await batchRequest(account.key, 'POST', '/v1/hmac/keys/rotate');
  expect(created.status, JSON.stringify(created.body)).to.equal(201);
  return { ...account, secret: { kid: created.body.kid as string, secret: created.body.secret as string } };
}

export const call = (account: TestAccount, method: string, path: string, body?: unknown): Promise<Answer> => batchRequest(account.key, method, path, body);

/** Starts a check now and answers it once it has ended; the check id answered is readable at once. */
export async function checkNow(account: TestAccount, monitorId: string): Promise<Json> {
  const started = await call(account, 'POST', `/v1/monitors/${monitorId}/check`);
  expect(started.status, JSON.stringify(started.body)).to.equal(202);
  const first = await call(account, 'GET', `/v1/monitors/${monitorId}/checks/${started.body.check_id as string}`);
  expect(first.status, JSON.stringify(first.body)).to.equal(200);
  expect(first.body.check_id).to.equal(started.body.check_id);
  return waitForCheck(account, monitorId, started.body.check_id as string);
}

export async function waitForCheck(account: TestAccount, monitorId: string, checkId: string): Promise<Json> {
  let check: Json = {};
  await eventually(async () => {
    const read = await call(account, 'GET', `/v1/monitors/${monitorId}/checks/${checkId}`);
    check = read.body;
    return read.status === 200 && check.status !== 'running';
  }, 600, 200);
  return check;
}

/** The events a receiver got, parsed, each checked to be signed with the account's key. */
export function eventsOf(receiver: WebhookReceiver, account: MonitorAccount, from = 0): Json[] {
  return receiver.deliveries.slice(from).map((delivery) => {
    expect(pythonVerifies(delivery.body, String(delivery.headers['x-signature']), { [account.secret.kid]: account.secret.secret }), 'signed with the account key').to.equal(true);
    const body = JSON.parse(delivery.body.toString('utf8')) as Json;
    expect(delivery.headers['x-service-event-id']).to.equal(body.event_id);
    return body;
  });
}

/** Every event of `check` the receiver got, de-duplicated by event id, once as many as its counts announce have arrived. */
export async function checkEvents(receiver: WebhookReceiver, account: MonitorAccount, check: Json): Promise<Json[]> {
  const expected = check.baseline ? 1 : Number(check.new) + Number(check.changed) + Number(check.removed) + 1;
  const unique = (): Json[] => {
    const found = new Map<string, Json>();
    for (const event of eventsOf(receiver, account)) if (event.check_id === check.check_id) found.set(event.event_id as string, event);
    return [...found.values()];
  };
  await eventually(async () => unique().length >= expected, 300, 200).catch((error: unknown) => {
    throw new Error(`${String(error)}: ${unique().length} of ${expected} events of ${JSON.stringify(check)} arrived: ${JSON.stringify(unique().map((event) => [event.event_type, event.url]))}`);
  });
  return unique();
}
