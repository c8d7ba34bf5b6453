/**
 * Starting a run's webhook delivery as a child workflow (by its function, under its id), which outlives
 * the run (abandon policy). A start that fails is recorded on the run (`webhook_outcome: not_started`)
 * and tried again with growing pauses; one that finds the delivery already started is done.
 */
import { ParentClosePolicy, sleep, startChild } from '@temporalio/workflow';
import type { WebhookRetry } from '../core/webhooks/deliveries';
import { webhookWorkflowId } from '../core/jobs/workflow-names';
import { lightActivities } from './light-queue';
import { RECORD_RETRY } from '../core/jobs/retry-rules';
import { webhookDeliveryWorkflow } from './webhook-delivery';

/** Tries of the start: pauses of 1 s, 2 s, 4 s ... 1 min, about an hour in all. */
const START_TRIES = 64;

export async function startWebhookDelivery(event: { key: string; eventId: string }, retry: WebhookRetry): Promise<void> {
  let failed = false;
  for (let attempt = 1; ; attempt++) {
    try {
      await startChild(webhookDeliveryWorkflow, {
        workflowId: webhookWorkflowId(event.eventId),
        args: [{ key: event.key, retry }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
      });
      break;
    } catch (error) {
      if (error instanceof Error && error.name === 'WorkflowExecutionAlreadyStartedError') break;
      const { recordWebhookStart } = lightActivities({ startToCloseTimeout: '30 seconds', retry: RECORD_RETRY });
      if (!failed) await recordWebhookStart({ key: event.key, started: false });
      failed = true;
      if (attempt >= START_TRIES) return;
      await sleep(Math.min(60_000, 1_000 * 2 ** (attempt - 1)));
    }
  }
  if (failed) {
    const { recordWebhookStart } = lightActivities({ startToCloseTimeout: '30 seconds', retry: RECORD_RETRY });
    await recordWebhookStart({ key: event.key, started: true });
  }
}
