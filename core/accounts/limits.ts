/**
 * Per-account limits on what an account holds at once (MCP sessions, scheduled jobs, stored CSV
 * inputs and their bytes, exports being written): one more than the plan allows is refused with 429
 * `quota_exceeded` naming the limit, so no account, a free signup included, can take the service's
 * memory or workers from the others.
 *
 * Each thing held takes one of the account's numbered slots of its limit before it is created
 * (`accounts.holdings`, limit-gate.ts), so creations in flight at once in any number of API
 * processes cannot all pass the last free place; a refusal is remembered briefly so a flood of
 * creations does not read the database each time. The byte total of stored inputs is summed from
 * the records where an upload is stored.
 */
import type { AccountLimits } from '../../base/config';
import { problem } from '../../base/errors';
import type { PlanCatalogue } from './plans';
import type { Principal } from './principal';
import { AccountsError, type AccountStore } from './store';

/** The limits that count what an account holds (the schedule interval is a floor, the request budget a rate). */
export type CountedLimit = Exclude<keyof AccountLimits, 'scheduleIntervalSeconds' | 'requestsPerSecond' | 'requestBurst' | 'requestsInFlight' | 'renderPages' | 'deadlineRenders' | 'cappedPages' | 'historyVersions' | 'historyDays' | 'monitorIntervalSeconds'>;

/** Names the limits as callers and `ACCOUNT_LIMITS` spell them. */
export const LIMIT_NAMES: Record<keyof AccountLimits, string> = {
  mcpSessions: 'mcp_sessions',
  scheduledJobs: 'scheduled_jobs',
  scheduleIntervalSeconds: 'schedule_interval_seconds',
  storedInputs: 'stored_inputs',
  storedInputBytes: 'stored_input_bytes',
  concurrentExports: 'concurrent_exports',
  requestsPerSecond: 'requests_per_second',
  requestBurst: 'request_burst',
  requestsInFlight: 'requests_in_flight',
  renderPages: 'render_pages',
  deadlineRenders: 'deadline_renders',
  cappedPages: 'capped_pages',
  historyVersions: 'history_versions',
  historyDays: 'history_days',
  monitors: 'monitors',
  monitorUrls: 'monitor_urls',
  monitorIntervalSeconds: 'monitor_interval_seconds',
};

const WHAT: Record<keyof AccountLimits, string> = {
  mcpSessions: 'open MCP sessions',
  scheduledJobs: 'scheduled jobs',
  scheduleIntervalSeconds: 'seconds between scheduled fires',
  storedInputs: 'stored CSV inputs',
  storedInputBytes: 'bytes of stored CSV inputs',
  concurrentExports: 'exports being written',
  requestsPerSecond: 'requests per second',
  requestBurst: 'requests at once after a pause',
  requestsInFlight: 'requests in flight at once',
  renderPages: 'browser pages at once',
  deadlineRenders: 'renders that ran to the render deadline',
  cappedPages: 'pages refused at a parse cap',
  historyVersions: 'versions kept per tracked URL',
  historyDays: 'days of change history',
  monitors: 'monitors',
  monitorUrls: 'monitored URLs',
  monitorIntervalSeconds: 'seconds between a monitor\'s checks',
};

/** The 429 for one resource past `limit`; `retryAfter` when waiting frees one (an export ends). */
export function quotaExceeded(limit: CountedLimit, allowed: number, retryAfterSeconds?: number) {
  return problem('quota_exceeded', `The account's plan allows ${allowed} ${WHAT[limit]} (limit ${LIMIT_NAMES[limit]}); end or delete one first.`, {
    members: { limit: LIMIT_NAMES[limit], allowed },
    ...(retryAfterSeconds !== undefined ? { headers: { 'Retry-After': String(retryAfterSeconds) } } : {}),
  });
}

/**
 * Throws `quota_exceeded` when an account holding `held` of a resource may not take `adding` more.
 * `held` is counted by the caller from its own records.
 */
export function checkLimit(principal: Pick<Principal, 'plan'>, limit: CountedLimit, held: number, adding = 1, retryAfterSeconds?: number): void {
  const allowed = principal.plan.limits[limit];
  if (held + adding > allowed) throw quotaExceeded(limit, allowed, retryAfterSeconds);
}

/** The plan of an account acting without a key of the request (an upload through its capability link). */
export async function planOfAccount(accounts: { store: Pick<AccountStore, 'liveAccount'>; plans: Pick<PlanCatalogue, 'resolve'> }, accountId: string): Promise<Pick<Principal, 'plan'>> {
  try {
    const account = await accounts.store.liveAccount(accountId);
    return { plan: accounts.plans.resolve(account.plan, account.overrides ?? {}) };
  } catch (error) {
    if (error instanceof AccountsError) throw problem('not_found', 'This link is unknown or has expired.');
    throw error;
  }
}
