/** A scheduled job's schedule: replaced (the run in flight goes on, the new one governs the next fires), paused or resumed. */
import type { Principal } from '../../accounts';
import { problem } from '../../../base/errors';
import type { CommandContext } from '../context';
import type { JobDoc } from '../store';
import { scheduleRulesFor } from './limits';
import { parseSchedule, type JobSchedule, type ScheduleState } from './parse';

export function scheduleCommands(c: CommandContext) {
  const { store, deps } = c;
  const ownScheduledJob = async (principal: Principal, jobId: string): Promise<JobDoc> => {
    const job = await c.ownJob(principal, jobId);
    if (job.type !== 'scheduled') throw problem('conflict', 'The job is not a scheduled job: it has no schedule.', { members: { reason: 'job_not_scheduled' } });
    return job;
  };
  return {
    async setSchedule(principal: Principal, jobId: string, requested: JobSchedule): Promise<JobDoc> {
      const schedule = parseSchedule(requested, scheduleRulesFor(deps.config, principal));
      const job = await ownScheduledJob(principal, jobId);
      await c.schedules().update(jobId, schedule);
      const next = await c.schedules().nextFire(jobId, schedule);
      await store.jobs.updateOne({ _id: jobId }, { $set: { schedule, next_scheduled_run: next, updated_at: new Date() } });
      return { ...job, schedule, next_scheduled_run: next };
    },

    async setScheduleState(principal: Principal, jobId: string, state: ScheduleState): Promise<JobDoc> {
      const job = await ownScheduledJob(principal, jobId);
      await c.schedules().setState(jobId, state);
      const next = await c.schedules().nextFire(jobId, job.schedule as JobSchedule);
      await store.jobs.updateOne({ _id: jobId }, { $set: { schedule_state: state, next_scheduled_run: next, updated_at: new Date() } });
      return { ...job, schedule_state: state, next_scheduled_run: next };
    },
  };
}
