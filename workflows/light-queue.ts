/**
 * Where a workflow sends its light activities (webhook deliveries, progress and end records, retention,
 * the reconciler): the light task queue beside its own, which the same worker process serves with slots
 * of its own, so they never wait behind browser-bound slices. Histories recorded before the light queue
 * existed replay with their activities on the main queue (the `patched` marker).
 */
import { patched, proxyActivities, workflowInfo, type ActivityOptions } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { lightTaskQueue } from '../core/jobs/workflow-names';

export const LIGHT_QUEUE_PATCH = 'light-task-queue';

export function lightActivities(options: ActivityOptions): Activities {
  const taskQueue = patched(LIGHT_QUEUE_PATCH) ? lightTaskQueue(workflowInfo().taskQueue) : undefined;
  return proxyActivities<Activities>({ ...options, ...(taskQueue ? { taskQueue } : {}) });
}
