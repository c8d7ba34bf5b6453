/**
 * The Temporal side of a scheduled job: its Schedule `batch-schedule-<job_id>`, whose every fire starts
 * `batchScheduledFireWorkflow` (schedules/fire.ts makes the run), created, changed, paused, removed, and
 * asked when it fires next. Overlapping fires are skipped: a fire while the last fire's run still runs
 * does nothing. The schedule shows in the Temporal Web UI.
 */
import { ScheduleNotFoundError, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import { msToTs, tsToMs } from '@temporalio/common/lib/time';
import { SCHEDULED_FIRE_WORKFLOW_TYPE } from '../../jobs/workflow-names';
import { instantOf, scheduleSpec, UNIT_SECONDS, wallClock, type JobSchedule, type ScheduleState } from './parse';

export const batchScheduleId = (jobId: string): string => `batch-schedule-${jobId}`;

export function createJobSchedules(client: Client, taskQueue: string) {
  const handle = (jobId: string) => client.schedule.getHandle(batchScheduleId(jobId));
  return {
    async create(jobId: string, accountId: string, schedule: JobSchedule, state: ScheduleState): Promise<void> {
      const { spec, remainingActions } = scheduleSpec(schedule);
      const options: ScheduleOptions = {
        scheduleId: batchScheduleId(jobId),
        spec,
        action: { type: 'startWorkflow', workflowType: SCHEDULED_FIRE_WORKFLOW_TYPE, taskQueue, args: [{ jobId }], workflowId: `fire-${jobId}` },
        // A fire while the last fire's run still runs is skipped, never stacked.
        policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
        state: { paused: state === 'paused', note: `Batch job ${jobId} of account ${accountId}`, ...(remainingActions !== undefined ? { remainingActions } : {}) },
      };
      await client.schedule.create(options);
    },

    async update(jobId: string, schedule: JobSchedule): Promise<void> {
      const { spec, remainingActions } = scheduleSpec(schedule);
      await handle(jobId).update((previous) => ({
        ...previous,
        spec,
        state: { ...previous.state, ...(remainingActions !== undefined ? { remainingActions } : { remainingActions: undefined }) },
      }));
    },

    async setState(jobId: string, state: ScheduleState): Promise<void> {
      if (state === 'paused') await handle(jobId).pause('paused through the API');
      else await handle(jobId).unpause('resumed through the API');
    },

    /** Removes the schedule; one already gone is fine. */
    async remove(jobId: string): Promise<void> {
      try {
        await handle(jobId).delete();
      } catch (error) {
        if (!(error instanceof ScheduleNotFoundError)) throw error;
      }
    },

    /** When the schedule fires next (what would fire next while it is paused), or null once it has no fire left. */
    async nextFire(jobId: string, schedule: JobSchedule, now = new Date()): Promise<Date | null> {
      const described = await handle(jobId).describe();
      if (described.state.remainingActions === 0) return null;
      if (schedule.at) {
        const at = instantOf(wallClock(schedule.at) as NonNullable<ReturnType<typeof wallClock>>, schedule.timezone ?? 'UTC');
        return at > now.getTime() ? new Date(at) : null;
      }
      const next = described.info.nextActionTimes[0];
      if (next) return next;
      // A paused schedule lists no coming action: ask its spec for the next matching time.
      const window = schedule.rate ? 2 * schedule.rate.every * UNIT_SECONDS[schedule.rate.unit] : 62 * 86_400;
      const { startTime } = await client.workflowService.listScheduleMatchingTimes({
        namespace: client.options.namespace,
        scheduleId: batchScheduleId(jobId),
        startTime: msToTs(now.getTime()),
        endTime: msToTs(now.getTime() + window * 1000),
      });
      const first = startTime?.[0];
      return first ? new Date(tsToMs(first)) : null;
    },
  };
}

export type JobSchedules = ReturnType<typeof createJobSchedules>;
