/**
 * A re-preparation asked for when a page no longer gives every required field (the site may have
 * changed): started at the service's expense (no slot) unless one ran within the hour; the recipe in
 * force keeps serving until a new one verifies. Wherever a Fetch with `extract` runs (the API, and the
 * worker for monitors' checks) asks it the same way.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import { PREPARE_WORKFLOW_TYPE, STATUS_ATTRIBUTE } from '../jobs/workflow-names';
import { extractCollections, prepareWorkflowId } from './store';

/** A stale recipe is re-prepared at most this often. */
const REFRESH_INTERVAL_MS = 60 * 60 * 1000;

export interface RefreshDeps {
  db: Db;
  client: Client;
  taskQueue: string;
  now?: () => Date;
}

/** Whether a re-preparation of `domain` was started now. */
export async function requestRefresh(deps: RefreshDeps, domain: string): Promise<boolean> {
  const { domains } = extractCollections(deps.db);
  const record = await domains.findOne({ _id: domain });
  if (!record || record.status !== 'ready') return false;
  const at = (deps.now ?? (() => new Date()))();
  if (record.refresh_requested_at && at.getTime() - record.refresh_requested_at.getTime() < REFRESH_INTERVAL_MS) return false;
  const claimed = await domains.updateOne(
    { _id: domain, status: 'ready', refresh_requested_at: record.refresh_requested_at ?? { $exists: false } } as never,
    { $set: { refresh_requested_at: at } },
  );
  if (claimed.modifiedCount === 0) return false;
  try {
    await deps.client.workflow.start(PREPARE_WORKFLOW_TYPE, {
      taskQueue: deps.taskQueue,
      workflowId: prepareWorkflowId(domain),
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
      args: [{ domain, exampleUrls: record.example_urls, refresh: true }],
      typedSearchAttributes: [{ key: STATUS_ATTRIBUTE, value: 'preparing' }],
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
  return true;
}
