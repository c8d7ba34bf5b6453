/**
 * Which failures mean "a component is down" rather than "this request is wrong" or "our bug": the
 * database or Temporal unreachable, or not answering within its time-out (DATABASE_TIMEOUT_MS,
 * TEMPORAL_TIMEOUT_MS). Callers get 503 `service_unavailable` with `Retry-After` for these, never a
 * 500, so that every client retries them (all official clients retry 503 and honour Retry-After).
 */
import { MongoNetworkError, MongoNotConnectedError, MongoOperationTimeoutError, MongoServerSelectionError, MongoTopologyClosedError } from 'mongodb';
import { isUnknownOutcome } from './db';
import { problem, type ApiError } from './errors';

export type Dependency = 'database' | 'temporal' | 'worker';

/** Seconds a caller is asked to wait before retrying while a component is down. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

const DETAILS: Record<Dependency, string> = {
  database: 'The database is unreachable; retry after the Retry-After seconds.',
  temporal: 'The workflow service (Temporal) is unreachable; retry after the Retry-After seconds (with the same Idempotency-Key for a start).',
  worker: 'No worker polls the task queue, so this work could not move and was not accepted. Retry after the Retry-After seconds.',
};

/** The 503 a request gets when a component it needs is down. */
export function serviceUnavailable(dependency: Dependency, cause?: unknown): ApiError {
  const detail = DETAILS[dependency];
  return problem('service_unavailable', detail, {
    members: { component: dependency },
    headers: { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
    cause,
  });
}

// gRPC status codes (@grpc/grpc-js `status`): the server is away, or did not answer in time.
const GRPC_DEADLINE_EXCEEDED = 4;
const GRPC_UNAVAILABLE = 14;

/** A gRPC status error, as @grpc/grpc-js raises it: a numeric `code`, `details` and `metadata`. */
function isGrpcUnavailable(error: object): boolean {
  const { code } = error as { code?: unknown };
  return 'details' in error && 'metadata' in error && (code === GRPC_UNAVAILABLE || code === GRPC_DEADLINE_EXCEEDED);
}

function isDatabaseUnavailable(error: object): boolean {
  return (
    error instanceof MongoServerSelectionError ||
    // Pool cleared, connection reset, socket time-out: all network errors.
    error instanceof MongoNetworkError ||
    error instanceof MongoOperationTimeoutError ||
    error instanceof MongoTopologyClosedError ||
    error instanceof MongoNotConnectedError ||
    // Every connection of the pool busy for longer than the wait queue allows.
    (error as { name?: unknown }).name === 'MongoWaitQueueTimeoutError'
  );
}

/** The component whose absence caused `error` (its cause chain included), or undefined. */
export function unavailableDependency(error: unknown): Dependency | undefined {
  let current: unknown = error;
  // Temporal's client wraps the gRPC error once or twice (ServiceError → cause); a few levels suffice.
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    if (isDatabaseUnavailable(current)) return 'database';
    // A ledger write whose landing could not even be read back: the database is away, whatever the
    // driver called the first failure (a killed server's last answer is not always a network error).
    if (isUnknownOutcome(current)) return 'database';
    if (isGrpcUnavailable(current)) return 'temporal';
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
