import { ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { eventually } from './stack';

/**
 * Runs a Temporal Schedule's action now and answers that action's workflow result. The newest
 * action's workflow is watched, not the count: Temporal keeps only the last few actions. An action
 * the interval started may still run: this one runs beside it rather than being skipped.
 */
export async function triggerScheduleNow<T>(client: Client, scheduleId: string): Promise<T> {
  const schedule = client.schedule.getHandle(scheduleId);
  const newest = async (): Promise<string | undefined> => (await schedule.describe()).info.recentActions.at(-1)?.action.workflow.workflowId;
  const before = await newest();
  await schedule.trigger(ScheduleOverlapPolicy.ALLOW_ALL);
  let workflowId = '';
  await eventually(async () => {
    const latest = await newest();
    if (latest === undefined || latest === before) return false;
    workflowId = latest;
    return true;
  });
  return (await client.workflow.getHandle(workflowId).result()) as T;
}
