/**
 * The steps of a webhook's delivery, each run by an activity (activities/webhooks): the event written
 * once, one attempt per activity attempt (the stored bytes sent through the one webhook sender,
 * deliver.ts; the attempt recorded; anything but a 2xx fails retryably, so the delivery workflow's
 * retry policy spaces the attempts), and the final outcome kept on the run.
 */
import type { Db } from 'mongodb';
import { recordWebhookOutcome, recordWebhookStart } from '../batch/runs/webhook-outcome';
import { WorkFailure } from '../jobs/work';
import type { WebhookSender } from './deliver';
import { createWebhookEvents, type EventDocument, type RunEnd } from './events';

export interface DeliveryOutcome {
  delivered: boolean;
  attempts: number;
}

export function webhookDelivery(deps: { db: Db; sender: WebhookSender }) {
  const events = createWebhookEvents(deps.db);
  const { sender } = deps;
  // A run keeps its webhook's outcome through Batch's own records; a crawl's event only in its own state.
  const keepOutcome = async (event: EventDocument, outcome: 'delivered' | 'failed'): Promise<void> => {
    if (!event.crawl_id) await recordWebhookOutcome(deps.db, event.run_id, outcome);
  };
  const keepStart = async (event: EventDocument, outcome: 'not_started' | 'pending'): Promise<void> => {
    if (!event.crawl_id) await recordWebhookStart(deps.db, event.run_id, outcome);
  };

  return {
    /** Writes a run's end event once (idempotent per job and run sequence) and returns its key. */
    async recordRunEndEvent(end: RunEnd): Promise<{ key: string; eventId: string }> {
      const event = await events.recordRunEnd(end);
      return { key: event._id, eventId: event.event_id };
    },

    /** Attempt `attempt` at delivering event `key`. */
    async deliver(key: string, attempt: number): Promise<DeliveryOutcome> {
      const event = await events.get(key);
      if (!event) throw new WorkFailure('webhook_event_missing', `webhook event ${key} does not exist`);
      if (event.state !== 'pending') return { delivered: event.state === 'delivered', attempts: event.attempts };
      const sent = await sender.send({ url: event.url, body: Buffer.from(event.body, 'utf8'), eventId: event.event_id, accountId: event.account_id, signed: Boolean(event.signature) });
      if (!sent.sent) {
        throw sent.refused === 'signing_unavailable'
          ? new WorkFailure('signing_unavailable', 'SECRETS_KEY is not set: signed deliveries cannot be made')
          : new WorkFailure('signing_key_missing', 'the account has no active signing key');
      }
      const { outcome } = sent;
      await events.recordAttempt(event, {
        attempt,
        at: new Date(),
        elapsed_ms: outcome.elapsed_ms,
        ...(outcome.status_code !== undefined ? { status_code: outcome.status_code } : {}),
        ...(outcome.error !== undefined ? { error: outcome.error } : {}),
      });
      if (!outcome.delivered) throw new WorkFailure('webhook_attempt_failed', `delivery attempt ${attempt} failed: ${outcome.error ?? 'unknown'}`);
      await keepOutcome(event, 'delivered');
      return { delivered: true, attempts: attempt };
    },

    /** The run's workflow could not start the delivery of `key` (`started: false`), or did so on a later try. */
    async recordStart(key: string, started: boolean): Promise<void> {
      const event = await events.get(key);
      if (event) await keepStart(event, started ? 'pending' : 'not_started');
    },

    /** The retry policy gave up: the event's final outcome is `failed` (its attempts stay readable). */
    async gaveUp(key: string): Promise<DeliveryOutcome> {
      await events.markFailed(key);
      const event = await events.get(key);
      if (event) await keepOutcome(event, 'failed');
      return { delivered: false, attempts: event?.attempts ?? 0 };
    },
  };
}

export type WebhookDelivery = ReturnType<typeof webhookDelivery>;
