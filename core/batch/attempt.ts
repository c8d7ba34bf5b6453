/**
 * What a long piece of Batch work (a slice, an export) needs of the attempt that runs it, so the domain
 * never imports the workflow runtime: the activity hands in its own cancellation, attempt number and
 * heartbeats (activities/batch).
 */
export interface WorkAttempt {
  /** Aborted when the attempt is cancelled (its heartbeats no longer reach the server, the worker shuts down). */
  signal: AbortSignal;
  /** 1 for the first attempt. */
  attempt: number;
  /** What the previous attempt's last heartbeat carried (undefined on a first attempt). */
  heartbeatDetails: unknown;
  /** Reports progress, with what a retry should start from. */
  heartbeat(details?: unknown): void;
}
