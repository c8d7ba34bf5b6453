/**
 * Sending one webhook: the event's exact bytes, its id header, and when the event is signed an
 * `X-Signature` made with the account's active key and a fresh timestamp, posted through the guarded
 * poster (engine/webhooks/post.ts). The delivery activity and `POST /v1/webhook/test` both send
 * through here, so a test event is signed and posted exactly as a real delivery is.
 */
import type { Config } from '../../base/config';
import { newUlid } from '../../base/ids';
import { createWebhookPoster, type AttemptOutcome, type TargetGuard, type WebhookPoster } from '../../engine';
import { eventBody } from './events';
import type { HmacKeys } from './hmac-keys';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signatureHeader } from './signature';

export interface Delivery {
  url: string;
  /** The exact bytes to send (a stored event's body). */
  body: Buffer;
  eventId: string;
  accountId: string;
  signed: boolean;
}

export type SendOutcome =
  | { sent: true; outcome: AttemptOutcome }
  /** Nothing was sent: signing was asked for and cannot be done (no SECRETS_KEY, or the account has no active key). */
  | { sent: false; refused: 'signing_unavailable' | 'signing_key_missing' };

export interface WebhookSender {
  send(delivery: Delivery): Promise<SendOutcome>;
  /** A `webhook.test` event for no job, sent like a real delivery; its event id comes back with the outcome. */
  sendTest(accountId: string, url: string, signed: boolean): Promise<SendOutcome & { eventId: string }>;
  close(): Promise<void>;
}

/** `keys`: the process's HMAC key store (hmacKeysOf), undefined when the server has no SECRETS_KEY. */
export function createWebhookSender(deps: { keys: HmacKeys | undefined; config: Pick<Config, 'webhookTimeoutMs' | 'webhookCaFile'>; guard: TargetGuard; now?: () => Date }): WebhookSender {
  const now = deps.now ?? (() => new Date());
  let poster: WebhookPoster | undefined;
  const posterOf = (): WebhookPoster =>
    (poster ??= createWebhookPoster({ guard: deps.guard, timeoutMs: deps.config.webhookTimeoutMs, caFile: deps.config.webhookCaFile }));

  const send = async (delivery: Delivery): Promise<SendOutcome> => {
    const headers: Record<string, string> = { [EVENT_ID_HEADER]: delivery.eventId };
    if (delivery.signed) {
      if (!deps.keys) return { sent: false, refused: 'signing_unavailable' };
      const key = await deps.keys.signingKey(delivery.accountId);
      if (!key) return { sent: false, refused: 'signing_key_missing' };
      headers[SIGNATURE_HEADER] = signatureHeader(key, delivery.body, now().getTime() / 1000);
    }
    return { sent: true, outcome: await posterOf().post(delivery.url, delivery.body, headers) };
  };

  return {
    send,
    async sendTest(accountId, url, signed) {
      const at = now();
      const eventId = newUlid(at.getTime());
      const stats = { total: 0, completed: 0, successful: 0, failed: 0, spend: { credits: 0, cost: 0 } };
      const body = Buffer.from(JSON.stringify(eventBody({ event_type: 'webhook.test', job_id: 'test', run_id: 'test', run_sequence: 1, stats }, eventId, at)));
      return { eventId, ...(await send({ url, body, eventId, accountId, signed })) };
    },
    async close() {
      await poster?.close();
    },
  };
}
