/**
 * The plan's limits on Batch resources an account holds: scheduled jobs (the Batch clients document
 * 5), the shortest schedule `rate`, and exports being written at once. Each refusal is 429
 * `quota_exceeded` naming the limit (core/accounts/limits.ts).
 */
import type { Db } from 'mongodb';
import type { Principal } from '../accounts';
import { checkLimit } from '../accounts/limits';
import type { Config } from '../../base/config';
import { batchCollections } from './store';

/** An export not written within this long is failed or stuck: it no longer counts as being written. */
const EXPORT_STALE_MS = 3 * 3_600_000;

/** What `parseSchedule` is given: the plan's shortest rate (else the deployment's) and now. */
export function scheduleRulesFor(config: Pick<Config, 'batchScheduleMinIntervalSeconds'>, principal: Pick<Principal, 'plan'> | undefined): { minIntervalSeconds: number; now: number } {
  return { minIntervalSeconds: principal?.plan.limits.scheduleIntervalSeconds ?? config.batchScheduleMinIntervalSeconds, now: Date.now() };
}

/** Refuses a scheduled job past the plan's `scheduled_jobs`. */
export async function checkScheduledJobs(db: Db, principal: Principal): Promise<void> {
  const { jobs } = batchCollections(db);
  const held = await jobs.countDocuments({ account_id: principal.accountId, type: 'scheduled', status: { $ne: 'deleted' } });
  checkLimit(principal, 'scheduledJobs', held);
}

/** Refuses an export while the account has its plan's `concurrent_exports` being written. */
export async function checkConcurrentExports(db: Db, principal: Principal): Promise<void> {
  const { exports } = batchCollections(db);
  const held = await exports.countDocuments({ account_id: principal.accountId, status: { $in: ['pending', 'running'] }, created_at: { $gt: new Date(Date.now() - EXPORT_STALE_MS) } });
  checkLimit(principal, 'concurrentExports', held, 1, 30);
}
