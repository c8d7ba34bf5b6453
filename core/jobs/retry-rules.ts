/**
 * Every retry rule of the service, in one place: the retry policies of every activity (Temporal
 * applies them), and the one rule applied inside an activity, to a Batch task's fetches (TASK_RETRY,
 * spaced by `retryDelayMs`, the same exponential rule Temporal applies to the policies above).
 * Whether a failure is worth another attempt at all is the failure tables' to say
 * (core/jobs/failure-kinds.ts, engine/failures.ts: a non-retryable kind ends the attempts whatever
 * the policy), and for a target's answer `isTransientStatus`; the policies say only how attempts are
 * spaced and how many there are. Pure: workflows, activities and core import it.
 */
import type { Duration, RetryPolicy } from '@temporalio/common';

/** Records that must land (a run's end, progress, a crawl's publish): unlimited, even through a long database outage. */
export const RECORD_RETRY: RetryPolicy = { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' };

/** Work that must finish (a Batch slice, a scheduled fire): unlimited; work that can never succeed fails non-retryably. */
export const WORK_RETRY: RetryPolicy = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' };

/** Work steps that may fail for good (a crawl slice, a preparation step, an export): a bounded number of attempts. */
export const stepRetry = (maximumAttempts: number): RetryPolicy => ({ initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts });

/** Sweeps started by a Schedule (retention, the reconciler): the next fire runs them again anyway. */
export const sweepRetry = (maximumInterval: Duration, maximumAttempts: number): RetryPolicy => ({ initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval, maximumAttempts });

/** A quick probe (the self-check): a few attempts close together. */
export const PROBE_RETRY: RetryPolicy = { initialInterval: '200 milliseconds', maximumAttempts: 3 };

/**
 * A Batch task's fetches inside its slice (a task is not an activity of its own: 250 of them share a
 * slice). The attempts are BATCH_TASK_ATTEMPTS (`maximumAttempts` added where the configuration is
 * read); a task that fails for good or is refused is not tried again.
 */
export const TASK_RETRY = { initialInterval: 500, backoffCoefficient: 3, maximumInterval: 10_000 } satisfies RetryPolicy;

/** The pause before attempt `attempt + 1` (ms) under a policy whose intervals are in ms: Temporal's rule. */
export const retryDelayMs = (policy: { initialInterval: number; backoffCoefficient: number; maximumInterval: number }, attempt: number): number =>
  Math.min(policy.maximumInterval, policy.initialInterval * policy.backoffCoefficient ** (attempt - 1));

/** A target's answer worth trying again later: a rate limit or a server-side failure. */
export const isTransientStatus = (status: number): boolean => status === 429 || status >= 500;
