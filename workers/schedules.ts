/**
 * Schedules the worker keeps registered: the retention sweep and the reconciler of cut-short starts.
 * Registering is idempotent: an existing schedule gets the configured interval, so a changed setting
 * takes effect on the next start.
 */
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import type { Config } from '../base/config';
import type { Logger } from '../base/log';
import { RECONCILE_SCHEDULE_ID, RECONCILE_WORKFLOW } from '../core/reconcile';
import { RETENTION_SCHEDULE_ID, RETENTION_WORKFLOW } from '../core/retention';

export async function ensureSchedules(
  client: Client,
  config: Pick<Config, 'retentionIntervalMinutes' | 'reconcileIntervalMinutes' | 'temporalTaskQueue'>,
  log: Logger,
): Promise<void> {
  const every = [
    { scheduleId: RETENTION_SCHEDULE_ID, workflowType: RETENTION_WORKFLOW, minutes: config.retentionIntervalMinutes },
    { scheduleId: RECONCILE_SCHEDULE_ID, workflowType: RECONCILE_WORKFLOW, minutes: config.reconcileIntervalMinutes },
  ];
  for (const { scheduleId, workflowType, minutes } of every) {
    const options: ScheduleOptions = {
      scheduleId,
      spec: { intervals: [{ every: `${minutes}m` }] },
      action: { type: 'startWorkflow', workflowType, taskQueue: config.temporalTaskQueue, args: [] },
      // A pass still running when the next is due: skip the next, never stack them.
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
    };
    try {
      await client.schedule.create(options);
      log.info('schedule registered', { schedule: scheduleId, every_minutes: minutes });
    } catch (error) {
      if (!(error instanceof ScheduleAlreadyRunning)) throw error;
      await client.schedule.getHandle(scheduleId).update((previous) => ({ ...previous, spec: options.spec, action: { ...previous.action, ...options.action } }));
    }
  }
}
