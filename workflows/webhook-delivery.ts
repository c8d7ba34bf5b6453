/**
 * `webhook-<event_id>`: delivers one stored event at least once. Each attempt is one activity attempt;
 * Temporal spaces them with the policy below (from config, carried in the input), so a worker killed
 * between two attempts only delays the next one. When the policy gives up, the event is marked failed.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { WebhookRetry } from '../core/webhooks/deliveries';

export interface WebhookDeliveryInput {
  key: string;
  retry: WebhookRetry;
}

export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<{ delivered: boolean; attempts: number }> {
  const { deliverWebhook } = proxyActivities<Activities>({
    startToCloseTimeout: input.retry.attemptMs,
    scheduleToCloseTimeout: input.retry.totalMs,
    retry: {
      initialInterval: input.retry.initialMs,
      backoffCoefficient: 2,
      // Which failures are worth another attempt is the activity's to say (the failure table).
      maximumInterval: input.retry.maxIntervalMs,
    },
  });
  const { recordWebhookGaveUp } = proxyActivities<Activities>({
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });
  try {
    return await deliverWebhook(input.key);
  } catch {
    return recordWebhookGaveUp(input.key);
  }
}
