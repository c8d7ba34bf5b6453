/**
 * How an activity gives up: a Temporal `ApplicationFailure` whose `type` is the failure's kind and
 * whose `nonRetryable` comes from the failure tables (core/jobs/failure-kinds.ts for the jobs' own
 * kinds, engine/failures.ts for a fetch's), so whether Temporal tries the activity again is decided
 * there, not in each workflow's retry policy. `asActivity` runs a domain step with the activity's
 * context and converts its `WorkFailure` at this boundary.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { ACTIVITY_FAILURES, type ActivityFailureKind } from '../core/jobs/failure-kinds';
import { isWorkFailure, type WorkContext } from '../core/jobs/work';
import { failureOf, type FailureKind } from '../engine';

const rowOf = (kind: ActivityFailureKind | FailureKind) => (kind in ACTIVITY_FAILURES ? ACTIVITY_FAILURES[kind as ActivityFailureKind] : failureOf(kind));

export const activityFailure = (kind: ActivityFailureKind | FailureKind, message: string): ApplicationFailure =>
  ApplicationFailure.create({ type: kind, message, nonRetryable: !rowOf(kind).retry });

/** The running activity as a domain step sees it. */
export function workContext(): WorkContext {
  const context = Context.current();
  return {
    attempt: context.info.attempt,
    signal: context.cancellationSignal,
    progress: context.info.heartbeatDetails,
    heartbeat: (details?: unknown) => context.heartbeat(details),
  };
}

/** Runs a domain step with the activity's context; its `WorkFailure` becomes the table's `ApplicationFailure`. */
export async function asActivity<T>(step: (work: WorkContext) => Promise<T>): Promise<T> {
  try {
    return await step(workContext());
  } catch (error) {
    throw isWorkFailure(error) ? activityFailure(error.kind, error.message) : error;
  }
}
