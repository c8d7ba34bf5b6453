/**
 * Every name the API, the worker and the workflows share about Temporal: workflow types and ids,
 * signals, search attributes and task queues. Pure (the workflow bundle imports it). A workflow type
 * here is the name of its function in workflows/ (test/unit/workflows/names.test.ts holds them to it);
 * workflows start each other by function reference, callers outside the bundle by these names.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

// Workflow types.
export const CRAWL_WORKFLOW_TYPE = 'crawlWorkflow';
export const BATCH_RUN_WORKFLOW_TYPE = 'batchRunWorkflow';
export const BATCH_EXPORT_WORKFLOW_TYPE = 'batchExportWorkflow';
export const SCHEDULED_FIRE_WORKFLOW_TYPE = 'batchScheduledFireWorkflow';
export const WEBHOOK_WORKFLOW_TYPE = 'webhookDeliveryWorkflow';
export const PREPARE_WORKFLOW_TYPE = 'prepareDomainWorkflow';
export const RETENTION_WORKFLOW_TYPE = 'retentionWorkflow';
export const RECONCILE_WORKFLOW_TYPE = 'reconcileWorkflow';
export const SELF_CHECK_WORKFLOW_TYPE = 'selfCheckWorkflow';
export const MONITOR_CHECK_WORKFLOW_TYPE = 'monitorCheckWorkflow';

// Workflow ids: one workflow per resource, so a second start finds the first.
export const crawlWorkflowId = (crawlId: string): string => `crawl-${crawlId}`;
export const batchRunWorkflowId = (runId: string): string => `run-${runId}`;
export const batchExportWorkflowId = (exportId: string): string => `export-${exportId}`;
export const webhookWorkflowId = (eventId: string): string => `webhook-${eventId}`;
export const prepareWorkflowId = (domain: string): string => `prepare-${domain}`;
/** A monitor's scheduled checks (the Schedule appends each fire's time) and its checks asked for now. */
export const monitorScheduledCheckId = (monitorId: string): string => `monitor-check-${monitorId}`;
export const monitorManualCheckId = (monitorId: string, checkId: string): string => `monitor-check-${monitorId}-now-${checkId}`;

// Signals.
export const STOP_CRAWL_SIGNAL = 'stopCrawl';
export const TASKS_ADDED_SIGNAL = 'batchTasksAdded';
export const PAUSE_SIGNAL = 'batchPause';
export const RESUME_SIGNAL = 'batchResume';
export const STOP_SIGNAL = 'batchStop';

/** What the add-tasks call tells a running run: how far the job's tasks go now, and whether that is all. */
export interface TasksAdded {
  sliceCount: number;
  total: number;
  lastBatch: boolean;
}

/** How a run is ended early: a stop, a deleted job or run. */
export type StopKind = 'stopped' | 'deleted';

// Search attributes an operator filters by in the Temporal Web UI.
export const ACCOUNT_ATTRIBUTE = defineSearchAttributeKey('FetchplaneAccountId', SearchAttributeType.KEYWORD);
export const STATUS_ATTRIBUTE = defineSearchAttributeKey('FetchplaneStatus', SearchAttributeType.KEYWORD);
export const JOB_ATTRIBUTE = defineSearchAttributeKey('FetchplaneJobId', SearchAttributeType.KEYWORD);
/** The step a run is at when its status says little (a preparation: `discovering`, `verifying`, ...). */
export const STATE_ATTRIBUTE = defineSearchAttributeKey('FetchplaneState', SearchAttributeType.KEYWORD);

/**
 * The task queue of light activities (webhook deliveries, progress and end records, retention, the
 * reconciler) beside a main one: served by the same worker process with slots of its own, so a run's
 * end or a delivery never waits behind browser-bound slices.
 */
export const lightTaskQueue = (taskQueue: string): string => `${taskQueue}-light`;
