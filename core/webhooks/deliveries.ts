/**
 * Starting a delivery: one workflow per event, `webhook-<event_id>`, with the retry policy from config.
 * Starting it twice is harmless (the second start finds the first), so the caller may be retried. A run
 * workflow that ends starts it as a child with an abandon policy instead, through the same id and input.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Config } from '../../base/config';
import { WEBHOOK_WORKFLOW_TYPE, webhookWorkflowId } from '../jobs/workflow-names';

export interface WebhookRetry {
  initialMs: number;
  maxIntervalMs: number;
  totalMs: number;
  attemptMs: number;
}

export { WEBHOOK_WORKFLOW_TYPE as WEBHOOK_WORKFLOW, webhookWorkflowId } from '../jobs/workflow-names';

export function webhookRetry(config: Pick<Config, 'webhookRetryInitialMs' | 'webhookRetryMaxIntervalMs' | 'webhookRetryHours' | 'webhookTimeoutMs'>): WebhookRetry {
  return {
    initialMs: config.webhookRetryInitialMs,
    maxIntervalMs: config.webhookRetryMaxIntervalMs,
    totalMs: config.webhookRetryHours * 3_600_000,
    attemptMs: config.webhookTimeoutMs + 5_000,
  };
}

export async function startDelivery(client: Client, taskQueue: string, event: { key: string; eventId: string }, retry: WebhookRetry): Promise<void> {
  try {
    await client.workflow.start(WEBHOOK_WORKFLOW_TYPE, {
      taskQueue,
      workflowId: webhookWorkflowId(event.eventId),
      args: [{ key: event.key, retry }],
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}
