/**
 * Webhook delivery activities. `deliverWebhook` makes one attempt per activity attempt: it re-checks the
 * receiver against the target policy, signs the stored bytes with the account's current signing key
 * and a fresh timestamp, records the attempt, and fails retryably on anything but a 2xx, so Temporal's
 * retry policy (set by the delivery workflow from config) spaces the attempts.
 */
import { Context } from '@temporalio/activity';
import { recordWebhookOutcome } from '../../core/batch/run-records';
import { createHmacKeys } from '../../core/webhooks/hmac-keys';
import { createWebhookEvents, type RunEnd } from '../../core/webhooks/events';
import { createSecretBox } from '../../core/webhooks/secret-box';
import { EVENT_ID_HEADER, signatureHeader } from '../../core/webhooks/signature';
import { createTargetGuard, createWebhookPoster, type WebhookPoster } from '../../engine';
import type { ActivityDeps } from '../deps';
import { activityFailure } from '../failures';

export interface DeliveryOutcome {
  delivered: boolean;
  attempts: number;
}

export function webhookActivities(deps: ActivityDeps) {
  const events = createWebhookEvents(deps.db);
  let poster: WebhookPoster | undefined;
  const posterOf = (): WebhookPoster =>
    (poster ??= createWebhookPoster({ guard: createTargetGuard(deps.config), timeoutMs: deps.config.webhookTimeoutMs, caFile: deps.config.webhookCaFile }));

  // The run keeps its webhook's final outcome, through Batch's own command.
  const keepOutcome = (runId: string, outcome: 'delivered' | 'failed'): Promise<void> => recordWebhookOutcome(deps.db, runId, outcome);

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
      const body = Buffer.from(event.body, 'utf8');
      const headers: Record<string, string> = { [EVENT_ID_HEADER]: event.event_id };
      if (event.signature) {
        if (!deps.config.secretsKey) throw activityFailure('signing_unavailable', 'SECRETS_KEY is not set: signed deliveries cannot be made');
        const key = await createHmacKeys(deps.db, createSecretBox(deps.config.secretsKey)).signingKey(event.account_id);
        if (!key) throw activityFailure('signing_key_missing', 'the account has no active signing key');
        headers['X-Signature'] = signatureHeader(key, body, Date.now() / 1000);
      }
      const outcome = await posterOf().post(event.url, body, headers);
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

    /** The retry policy gave up: the event's final outcome is `failed` (its attempts stay readable). */
    async recordWebhookGaveUp(key: string): Promise<DeliveryOutcome> {
      await events.markFailed(key);
      const event = await events.get(key);
      if (event) await keepOutcome(event.run_id, 'failed');
      return { delivered: false, attempts: event?.attempts ?? 0 };
    },
  };
}
