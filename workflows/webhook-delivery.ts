/**
 * `webhook-<event_id>`: delivers one stored event at least once. Each attempt is one activity attempt
 * on the light task queue; Temporal spaces them with the policy below (from config, carried in the
 * input), so a worker killed between two attempts only delays the next one. When the policy gives up
 * (its whole window, `retry.totalMs`, has passed), the event is marked failed.
 */
import type { WebhookRetry } from '../core/webhooks/deliveries';
import { lightActivities } from './light-queue';
import { RECORD_RETRY } from '../core/jobs/retry-rules';

export interface WebhookDeliveryInput {
  key: string;
  retry: WebhookRetry;
}

export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<{ delivered: boolean; attempts: number }> {
  const { deliverWebhook } = lightActivities({
    startToCloseTimeout: input.retry.attemptMs,
    scheduleToCloseTimeout: input.retry.totalMs,
    retry: {
      initialInterval: input.retry.initialMs,
      backoffCoefficient: 2,
      // Which failures are worth another attempt is the activity's to say (the failure table).
      maximumInterval: input.retry.maxIntervalMs,
    },
  });
  const { recordWebhookGaveUp } = lightActivities({ startToCloseTimeout: '30 seconds', retry: RECORD_RETRY });
  try {
    return await deliverWebhook(input.key);
  } catch {
    return recordWebhookGaveUp(input.key);
  }
}
