/**
 * Names the API and the Batch run workflow share: the workflow type and id, its signals and the
 * search attributes an operator filters runs by in the Temporal Web UI (account, job, status). Pure
 * (the workflow bundle imports it).
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const BATCH_RUN_WORKFLOW_TYPE = 'batchRunWorkflow';
export const batchRunWorkflowId = (runId: string): string => `run-${runId}`;

export const BATCH_EXPORT_WORKFLOW_TYPE = 'batchExportWorkflow';
export const batchExportWorkflowId = (exportId: string): string => `export-${exportId}`;

export const TASKS_ADDED_SIGNAL = 'batchTasksAdded';
export const PAUSE_SIGNAL = 'batchPause';
export const RESUME_SIGNAL = 'batchResume';
export const STOP_SIGNAL = 'batchStop';

export const JOB_ATTRIBUTE = defineSearchAttributeKey('FetchplaneJobId', SearchAttributeType.KEYWORD);

/** What the add-tasks call tells a running run: how far the job's tasks go now, and whether that is all. */
export interface TasksAdded {
  sliceCount: number;
  total: number;
  lastBatch: boolean;
}

/** How a run is ended early: a stop, a deleted job or run. */
export type StopKind = 'stopped' | 'deleted';
