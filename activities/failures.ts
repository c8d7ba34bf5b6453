/**
 * How an activity gives up: a Temporal `ApplicationFailure` whose `type` is the failure's kind and
 * whose `nonRetryable` comes from the failure table (engine/failures.ts), so whether Temporal tries
 * the activity again is decided there, not in each workflow's retry policy.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { failureOf, type FailureKind } from '../engine';

export const activityFailure = (kind: FailureKind, message: string): ApplicationFailure =>
  ApplicationFailure.create({ type: kind, message, nonRetryable: !failureOf(kind).retry });
