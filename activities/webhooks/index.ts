/**
 * Webhook delivery activities. `deliverWebhook` makes one attempt per activity attempt: it sends the
 * stored bytes through the one webhook sender (core/webhooks/deliver.ts: the receiver re-checked against
 * the target policy, signed with the account's current signing key and a fresh timestamp), records the attempt, and fails retryably on anything but a 2xx, so Temporal's
 * retry policy (set by the delivery workflow from config) spaces the attempts.
 */
import { Context } from '@temporalio/activity';
import { recordWebhookOutcome, recordWebhookStart } from '../../core/batch/runs/webhook-outcome';
import { createWebhookEvents, type RunEnd } from '../../core/webhooks/events';
import type { ActivityDeps } from '../deps';
import { activityFailure } from '../failures';

export interface DeliveryOutcome {
  delivered: boolean;
  attempts: number;
}

export function webhookActivities(deps: ActivityDeps) {
  const events = createWebhookEvents(deps.db);
  const sender = deps.webhookSender;

  // The run keeps its webhook's outcome, through Batch's own commands.
  const keepOutcome = (runId: string, outcome: 'delivered' | 'failed'): Promise<void> => recordWebhookOutcome(deps.db, runId, outcome);
  const keepStart = (runId: string, outcome: 'not_started' | 'pending'): Promise<void> => recordWebhookStart(deps.db, runId, outcome);

  return {
    /** Writes a run's end event once (idempotent per job and run sequence) and returns its key. */
    async recordRunEndEvent(end: RunEnd): Promise<{ key: string; eventId: string }> {
      const event = await events.recordRunEnd(end);
      return { key: event._id, eventId: event.event_id };
    },

    async deliverWebhook(key: string): Promise<DeliveryOutcome> {
      const event = await events.get(key);
      if (!event) throw activityFailure('webhook_event_missing', `webhook event ${key} does not exist`);
      if (event.state !== 'pending') return { delivered: event.state === 'delivered', attempts: event.attempts };
      const attempt = Context.current().info.attempt;
      const sent = await sender.send({ url: event.url, body: Buffer.from(event.body, 'utf8'), eventId: event.event_id, accountId: event.account_id, signed: Boolean(event.signature) });
      if (!sent.sent) {
        throw sent.refused === 'signing_unavailable'
          ? activityFailure('signing_unavailable', 'SECRETS_KEY is not set: signed deliveries cannot be made')
          : activityFailure('signing_key_missing', 'the account has no active signing key');
      }
      const { outcome } = sent;
      await events.recordAttempt(event, {
        attempt,
        at: new Date(),
        elapsed_ms: outcome.elapsed_ms,
        ...(outcome.status_code !== undefined ? { status_code: outcome.status_code } : {}),
        ...(outcome.error !== undefined ? { error: outcome.error } : {}),
      });
      if (!outcome.delivered) throw activityFailure('webhook_attempt_failed', `delivery attempt ${attempt} failed: ${outcome.error ?? 'unknown'}`);
      await keepOutcome(event.run_id, 'delivered');
      return { delivered: true, attempts: attempt };
    },

    /** The run's workflow could not start the delivery of `key` (`started: false`), or did so on a later try. */
    async recordWebhookStart(input: { key: string; started: boolean }): Promise<void> {
      const event = await events.get(input.key);
      if (event) await keepStart(event.run_id, input.started ? 'pending' : 'not_started');
    },

    /** The retry policy gave up: the event's final outcome is `failed` (its attempts stay readable). */
    async recordWebhookGaveUp(key: string): Promise<DeliveryOutcome> {
      await events.markFailed(key);
      const event = await events.get(key);
      if (event) await keepOutcome(event.run_id, 'failed');
      return { delivered: false, attempts: event?.attempts ?? 0 };
    },
  };
}
