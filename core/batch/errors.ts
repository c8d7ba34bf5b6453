/**
 * How Batch's worker-side commands fail when the work they were given cannot be done: a plain error
 * with a string discriminant (never told apart by `instanceof`, which breaks across module copies),
 * which the activity turns into its Temporal failure at the boundary (activities/batch).
 */
export type BatchFailureReason =
  /** A slice's tasks (or the part of it a paused slice stored) are gone: the job was deleted under its run. */
  | 'slice_missing'
  /** The run's record is gone: there is nothing to end. */
  | 'run_missing'
  /** Work stopped before its end (cancelled, shutting down, cut short by the service): it must run again. */
  | 'interrupted';

export class BatchFailure extends Error {
  readonly kind = 'batch-failure';
  constructor(
    readonly reason: BatchFailureReason,
    message: string,
  ) {
    super(message);
    this.name = 'BatchFailure';
  }
}

export const isBatchFailure = (error: unknown): error is BatchFailure =>
  typeof error === 'object' && error !== null && (error as { kind?: unknown }).kind === 'batch-failure';
