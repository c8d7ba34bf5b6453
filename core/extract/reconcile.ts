/**
 * How the reconciler (core/jobs/reconcile.ts) settles Extract preparations: `prepare-<domain>`, one
 * preparation slot of the month, `preparing` until the workflow ends. A domain is prepared again and
 * again under the same workflow id, so only an execution started after the start counts as its own.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import { STATUS_ATTRIBUTE } from '../jobs/workflow-names';
import type { KindReconciler } from '../jobs/reconcile';
import { PREPARE_WORKFLOW_TYPE } from './commands';
import { giveBackPreparation } from './ends';
import { extractCollections, prepareWorkflowId } from './store';

export function prepareReconciler(deps: { db: Db; client: Client; taskQueue: string }): KindReconciler {
  const { domains } = extractCollections(deps.db);
  return {
    kind: 'prepare',
    surface: 'extract',
    workflowId: prepareWorkflowId,
    // The submission never heard back: it reads as interrupted (resubmit unchanged) and its slot returns.
    async giveBack(start) {
      await giveBackPreparation(deps.db, start.record_id, start.attempt ?? '');
    },
    async unfinished(before, limit) {
      const docs = await domains.find({ status: 'preparing', updated_at: { $lt: before } }, { projection: { _id: 1 } }).limit(limit).toArray();
      return docs.map((doc) => doc._id);
    },
    async waiting(domain) {
      return (await domains.findOne({ _id: domain }, { projection: { status: 1 } }))?.status === 'preparing';
    },
    async restart(domain) {
      const record = await domains.findOne({ _id: domain, status: 'preparing' });
      if (!record) return;
      try {
        await deps.client.workflow.start(PREPARE_WORKFLOW_TYPE, {
          taskQueue: deps.taskQueue,
          workflowId: prepareWorkflowId(domain),
          workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
          args: [{ domain, exampleUrls: record.example_urls }],
          typedSearchAttributes: [{ key: STATUS_ATTRIBUTE, value: 'preparing' }],
        });
      } catch (error) {
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      }
    },
    async started(domain) {
      return (await domains.findOne({ _id: domain }, { projection: { _id: 1 } })) !== null;
    },
  };
}
