/**
 * The retry policies of every activity, in one place. Whether a failure is worth another attempt at all
 * is the failure tables' to say (activities/failure-kinds.ts, engine/failures.ts: a non-retryable kind
 * ends the attempts whatever the policy); these say only how attempts are spaced and how many there are.
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
