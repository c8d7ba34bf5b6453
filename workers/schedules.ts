/**
 * Schedules the worker keeps registered: today the retention sweep. Registering is idempotent: an
 * existing schedule gets the configured interval, so a changed setting takes effect on the next start.
 */
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import type { Config } from '../core/config';
import type { Logger } from '../core/log';
import { RETENTION_SCHEDULE_ID, RETENTION_WORKFLOW } from '../core/retention';

export async function ensureSchedules(client: Client, config: Pick<Config, 'retentionIntervalMinutes' | 'temporalTaskQueue'>, log: Logger): Promise<void> {
  const options: ScheduleOptions = {
    scheduleId: RETENTION_SCHEDULE_ID,
    spec: { intervals: [{ every: `${config.retentionIntervalMinutes}m` }] },
    action: { type: 'startWorkflow', workflowType: RETENTION_WORKFLOW, taskQueue: config.temporalTaskQueue, args: [] },
    // A sweep still running when the next is due: skip the next, never stack them.
    policies: { overlap: ScheduleOverlapPolicy.SKIP },
  };
  try {
    await client.schedule.create(options);
    log.info('schedule registered', { schedule: RETENTION_SCHEDULE_ID, every_minutes: config.retentionIntervalMinutes });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    await client.schedule.getHandle(RETENTION_SCHEDULE_ID).update((previous) => ({ ...previous, spec: options.spec, action: { ...previous.action, ...options.action } }));
  }
}
