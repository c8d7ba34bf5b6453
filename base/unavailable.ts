/**
 * Which failures mean "a component is down" rather than "this request is wrong" or "our bug": the
 * database or Temporal unreachable, or not answering within its time-out (DATABASE_TIMEOUT_MS,
 * TEMPORAL_TIMEOUT_MS), or the database refusing writes because its disk is full or failing. Callers
 * get 503 `service_unavailable` with `Retry-After` for these, never a 500, so that every client
 * retries them (all official clients retry 503 and honour Retry-After).
 */
import { MongoNetworkError, MongoNotConnectedError, MongoOperationTimeoutError, MongoServerError, MongoServerSelectionError, MongoTopologyClosedError } from 'mongodb';
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

const STORAGE_DETAIL = 'The database cannot store anything now (its disk is full or failing); retry after the Retry-After seconds.';

/**
 * What the store answers when it cannot write for want of space or a working disk: FerretDB passes on
 * SQLite's error in an InternalError ("database or disk is full", SQLITE_FULL), MongoDB names
 * OutOfDiskSpace (14031). Reads still work then, so nothing else would tell this apart from a bug.
 */
const STORAGE_MESSAGES = ['database or disk is full', 'disk I/O error', 'No space left on device', 'attempt to write a readonly database'];

export function isStorageFailure(error: unknown): boolean {
  if (!(error instanceof MongoServerError)) return false;
  if (error.code === 14031 || error.codeName === 'OutOfDiskSpace') return true;
  return STORAGE_MESSAGES.some((text) => error.message.includes(text));
}

/** Whether `error` or one of its causes is a storage failure. */
function storageFailureIn(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    if (isStorageFailure(current)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** The 503 a request gets when a component it needs is down. */
export function serviceUnavailable(dependency: Dependency, cause?: unknown): ApiError {
  const detail = dependency === 'database' && storageFailureIn(cause) ? STORAGE_DETAIL : DETAILS[dependency];
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
    if (isDatabaseUnavailable(current) || isStorageFailure(current)) return 'database';
    // A ledger write whose landing could not even be read back: the database is away, whatever the
    // driver called the first failure (a killed server's last answer is not always a network error).
    if (isUnknownOutcome(current)) return 'database';
    if (isGrpcUnavailable(current)) return 'temporal';
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
