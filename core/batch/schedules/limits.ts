/**
 * The plan's limits on scheduled jobs: how many an account holds (the Batch clients document 5; counted
 * by its `scheduled_jobs` slots, limit-gate.ts, which ask `scheduledJobStates` which holders still
 * count) and the shortest schedule `rate`. A refusal is 429 `quota_exceeded` naming the limit
 * (core/accounts/limits.ts).
 */
import type { Principal } from '../../accounts';
import type { Config } from '../../../base/config';
import type { BatchStore } from '../store';

/** What `parseSchedule` is given: the plan's shortest rate (else the deployment's) and now. */
export function scheduleRulesFor(config: Pick<Config, 'batchScheduleMinIntervalSeconds'>, principal: Pick<Principal, 'plan'> | undefined): { minIntervalSeconds: number; now: number } {
  return { minIntervalSeconds: principal?.plan.limits.scheduleIntervalSeconds ?? config.batchScheduleMinIntervalSeconds, now: Date.now() };
}

/** Of the jobs `ids`, which still count against `scheduled_jobs` (a deleted one does not). */
export async function scheduledJobStates(store: BatchStore, ids: string[]): Promise<Map<string, 'live' | 'ended'>> {
  const docs = await store.jobs.find({ _id: { $in: ids } }, { projection: { status: 1 } }).toArray();
  return new Map(docs.map((doc) => [doc._id, doc.status === 'deleted' ? 'ended' : 'live']));
}
