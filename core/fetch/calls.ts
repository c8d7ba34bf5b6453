/**
 * A Fetch call made by an account (the HTTP route, the MCP tools): the plan's Extract check, then the
 * pipeline with a held reservation. The caller holds the concurrency slot around it and sets its own
 * response headers from the outcome. Failures release the reservation: a failed request is never
 * charged.
 */
import type { Principal } from '../accounts';
import type { PlanCatalogue } from '../accounts/plans';
import type { Charging } from '../accounts/charging';
import { problem, type ApiError } from '../../base/errors';
import { holdCredits } from './billing';
import type { FetchJob, FetchPipeline, FetchResult } from './pipeline';

/**
 * A caller waits on the line for its answer: a host whose turn comes later than this (paused by its
 * own 429/503 answers, or busy: its concurrency, rate or Crawl-delay) is answered at once (RESP001,
 * retryable) rather than holding the request; Batch tasks and crawl pages wait their turn.
 */
const SYNC_HOST_WAIT_MS = 5_000;

/** AUTH010, before anything is fetched or charged: clients of `extract` fall back to `autoparse` on it. */
export function extractNotInPlan(plans: Pick<PlanCatalogue, 'withExtract'>, principal: Principal): ApiError {
  const including = plans.withExtract();
  return problem(
    'AUTH010',
    `Extract is not included in the ${principal.plan.name} plan${including.length > 0 ? `; it is included in: ${including.join(', ')}` : ''}. Without extract, autoparse=true returns general-purpose parsed JSON.`,
    { members: { parameter: 'extract' } },
  );
}

/** The pipeline's outcome for an account, or its refusal (the credit refusal when the ladder ran out of credits). */
export async function fetchForAccount(
  pipeline: FetchPipeline,
  accounts: { plans: Pick<PlanCatalogue, 'withExtract'>; charging: Pick<Charging, 'reservePooled'> },
  principal: Principal,
  job: FetchJob,
): Promise<FetchResult> {
  if (job.params.extract && !principal.plan.extract) throw extractNotInPlan(accounts.plans, principal);
  const billing = holdCredits(accounts.charging, principal);
  const result = await pipeline.run({ maxHostWaitMs: SYNC_HOST_WAIT_MS, ...job, reuseKey: principal.accountId }, billing);
  if (!result.ok && result.vetoed) return { ...result, error: billing.refusal() ?? result.error };
  return result;
}
