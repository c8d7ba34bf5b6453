/** The webhook delivery activities: each runs one step of core/webhooks/delivery.ts. */
import type { WebhookDelivery, DeliveryOutcome } from '../../core/webhooks/delivery';
import type { RunEnd } from '../../core/webhooks/events';
import { asActivity } from '../failures';

export type { DeliveryOutcome } from '../../core/webhooks/delivery';

export function webhookActivities(delivery: WebhookDelivery) {
  return {
    /** Writes a run's end event once (idempotent per job and run sequence) and returns its key. */
    async recordRunEndEvent(end: RunEnd): Promise<{ key: string; eventId: string }> {
      return delivery.recordRunEndEvent(end);
    },
    /** One delivery attempt per activity attempt; anything but a 2xx fails retryably. */
    async deliverWebhook(key: string): Promise<DeliveryOutcome> {
      return asActivity((work) => delivery.deliver(key, work.attempt));
    },
    /** The run's workflow could not start the delivery of `key` (`started: false`), or did so on a later try. */
    async recordWebhookStart(input: { key: string; started: boolean }): Promise<void> {
      await delivery.recordStart(input.key, input.started);
    },
    /** The retry policy gave up: the event's final outcome is `failed` (its attempts stay readable). */
    async recordWebhookGaveUp(key: string): Promise<DeliveryOutcome> {
      return delivery.gaveUp(key);
    },
  };
}
