/**
 * One check of a monitor (`monitor-check-<monitor>-<fire time>` from its Schedule, or
 * `monitor-check-<monitor>-now-<check>` when asked for now): begin (running, or skipped when another
 * check of the monitor still runs), its pages (one long activity that resumes where a killed attempt
 * stopped), its end (once), then one delivery per event, each a child that outlives the check.
 * Every step is an activity: a worker, the database or Temporal going away only delays the check.
 */
import { proxyActivities, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { CheckEnd } from '../core/monitors/check';
import { STATUS_ATTRIBUTE } from '../core/jobs/workflow-names';
import { RECORD_RETRY, WORK_RETRY } from '../core/jobs/retry-rules';
import { lightActivities } from './light-queue';
import { startWebhookDelivery } from './webhook-start';

export interface MonitorCheckInput {
  monitorId: string;
  trigger: 'scheduled' | 'manual';
  checkId?: string;
}

const { monitorCheckPages } = proxyActivities<Activities>({
  // 1,000 pages at four at a time take minutes; an attempt cut short resumes from its stored pages.
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '30 seconds',
  retry: WORK_RETRY,
  allowEagerDispatch: false,
});

export async function monitorCheckWorkflow(input: MonitorCheckInput): Promise<{ checkId?: string; status: string; events: number }> {
  // As a Batch run's end record: an attempt lost with its worker is tried again after this.
  const { monitorCheckBegin, monitorCheckEnd } = lightActivities({ startToCloseTimeout: '30 seconds', retry: RECORD_RETRY });
  const info = workflowInfo();
  const begun = await monitorCheckBegin({ ...input, fireId: info.workflowId, startedAt: info.startTime.getTime() });
  if (begun.kind === 'skipped') {
    upsertSearchAttributes([{ key: STATUS_ATTRIBUTE, value: 'skipped' }]);
    return { ...(begun.checkId ? { checkId: begun.checkId } : {}), status: 'skipped', events: 0 };
  }
  let end: CheckEnd = { status: 'completed' };
  if (begun.kind === 'run') {
    upsertSearchAttributes([{ key: STATUS_ATTRIBUTE, value: 'running' }]);
    try {
      const outcome = await monitorCheckPages(begun.checkId);
      if (!outcome.ok) end = { status: 'failed', reason: outcome.reason, detail: outcome.detail };
    } catch (error) {
      end = { status: 'failed', reason: 'internal', detail: error instanceof Error ? error.message : String(error) };
    }
  }
  const ended = await monitorCheckEnd({ checkId: begun.checkId, ...end });
  upsertSearchAttributes([{ key: STATUS_ATTRIBUTE, value: ended.status }]);
  // Each delivery outlives the check: it may retry for hours.
  for (const event of ended.events) await startWebhookDelivery(event, ended.webhookRetry);
  return { checkId: begun.checkId, status: ended.status, events: ended.events.length };
}
