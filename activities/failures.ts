/**
 * How an activity gives up: a Temporal `ApplicationFailure` whose `type` is the failure's kind and
 * whose `nonRetryable` comes from the failure tables (activities/failure-kinds.ts for the activities'
 * own kinds, engine/failures.ts for a fetch's), so whether Temporal tries the activity again is decided
 * there, not in each workflow's retry policy.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { failureOf, type FailureKind } from '../engine';
import { ACTIVITY_FAILURES, type ActivityFailureKind } from './failure-kinds';

const rowOf = (kind: ActivityFailureKind | FailureKind) => (kind in ACTIVITY_FAILURES ? ACTIVITY_FAILURES[kind as ActivityFailureKind] : failureOf(kind));

export const activityFailure = (kind: ActivityFailureKind | FailureKind, message: string): ApplicationFailure =>
  ApplicationFailure.create({ type: kind, message, nonRetryable: !rowOf(kind).retry });

/**
 * How an activity that did not finish its work gives up, so that the work is run again and never
 * stored as done: the cancellation Temporal delivered (a heartbeat the server no longer knew, a worker
 * shutting down), else a retryable `interrupted` failure.
 */
export const interruption = (signal: AbortSignal, message: string): Error =>
  signal.aborted && signal.reason instanceof Error ? signal.reason : activityFailure('interrupted', message);
