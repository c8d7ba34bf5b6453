/**
 * What a long step of a job (a crawl slice, a Batch slice, a preparation step, an export) sees of the
 * activity that runs it, so that the domain never imports the activity SDK: its attempt, the signal
 * that cancels it, the progress its last attempt reported, and a heartbeat. The activity builds one
 * from its context (activities/failures.ts `asActivity`) and turns a `WorkFailure` into the
 * `ApplicationFailure` the failure tables say (core/jobs/failure-kinds.ts, engine/failures.ts).
 */
import type { FailureKind } from '../../engine';
import type { ActivityFailureKind } from './failure-kinds';

export interface WorkContext {
  /** 1 for the first attempt. */
  attempt: number;
  /** Aborted when the work must stop (its heartbeats no longer reach the server, the worker shuts down). */
  signal: AbortSignal;
  /** What the last attempt's heartbeats carried, if anything. */
  progress: unknown;
  heartbeat(details?: unknown): void;
}

/** The way a step gives up, by kind: whether it is tried again is the failure table's to say. */
export class WorkFailure extends Error {
  readonly failure = 'work-failure';

  constructor(
    readonly kind: ActivityFailureKind | FailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'WorkFailure';
  }
}

export const isWorkFailure = (error: unknown): error is WorkFailure =>
  typeof error === 'object' && error !== null && (error as { failure?: unknown }).failure === 'work-failure';

/**
 * How a step that did not finish its work gives up, so that the work is run again and never stored as
 * done: the cancellation delivered to it (kept as it is), else a retryable `interrupted` failure.
 */
export const interruption = (signal: AbortSignal, message: string): Error =>
  signal.aborted && signal.reason instanceof Error ? signal.reason : new WorkFailure('interrupted', message);
