import { Client, Connection, isRetryableError, makeGrpcRetryInterceptor, type ConnectionOptions } from '@temporalio/client';
import type { Config } from './config';

type Interceptor = NonNullable<ConnectionOptions['interceptors']>[number];

export interface TemporalHandle {
  connection: Connection;
  client: Client;
  /** Resolves when the frontend answers, rejects after `timeoutMs`. */
  ping(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** TEMPORAL_TIMEOUT_MS's default, for callers that pass no configuration of it. */
const DEFAULT_TIMEOUT_MS = 5_000;

/**
 * Calls that wait on purpose (a workflow's result, an update's outcome): they keep the deadline their
 * caller gives, or none.
 */
const LONG_POLLS = new Set(['GetWorkflowExecutionHistory', 'PollWorkflowExecutionUpdate', 'UpdateWorkflowExecution', 'ExecuteMultiOperation']);

/** Pause before retry `attempt` + 1: the client's default backoff (×1.7 from 100 ms, ±20%), capped at 1 s. */
const backoffMs = (attempt: number): number => Math.min(1_000, 100 * 1.7 ** attempt) * (0.8 + Math.random() * 0.4);

const MAX_ATTEMPTS = 10;

/**
 * The client's own retry policy (retryable codes, attempts, backoff) bounded by a deadline: every call
 * but the long polls gets one of `timeoutMs` unless its caller set one (`withDeadline`), all its
 * attempts share it, and no retry is made that could not start before it, so the caller gets the real
 * error (UNAVAILABLE while Temporal is down) by the deadline. Without this, a call while Temporal is
 * down was retried for about 20 s (10 attempts, pauses up to 5 s) before it failed; the API answers
 * either error as 503 (unavailable.ts).
 */
function retryWithDeadline(timeoutMs: number): Interceptor {
  return (options, nextCall) => {
    const { path } = options.method_definition;
    const longPoll = LONG_POLLS.has(path.slice(path.lastIndexOf('/') + 1));
    const deadline = options.deadline ?? (longPoll ? undefined : Date.now() + timeoutMs);
    const deadlineMs = deadline === undefined ? Infinity : deadline instanceof Date ? deadline.getTime() : deadline;
    let pause = 0;
    // Made per call, to know the call's deadline: the decider runs first and chooses the pause.
    const retry = makeGrpcRetryInterceptor({
      retryableDecider: (attempt, status) => {
        if (attempt >= MAX_ATTEMPTS || !isRetryableError(status)) return false;
        pause = backoffMs(attempt);
        return Date.now() + pause < deadlineMs;
      },
      delayFunction: () => pause,
    });
    return retry(deadline === undefined ? options : { ...options, deadline }, nextCall);
  };
}

/**
 * A lazy connection: the API starts (and reports "not ready") even while Temporal is down, and
 * reconnects by itself when it comes back.
 */
export function connectTemporal(
  config: Pick<Config, 'temporalAddress' | 'temporalNamespace'> & Partial<Pick<Config, 'temporalTimeoutMs'>>,
): TemporalHandle {
  if (!config.temporalAddress) throw new Error('TEMPORAL_ADDRESS is not set and no local Temporal was started');
  const timeoutMs = config.temporalTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  const connection = Connection.lazy({
    address: config.temporalAddress,
    connectTimeout: `${timeoutMs}ms`,
    interceptors: [retryWithDeadline(timeoutMs)],
  });
  const client = new Client({ connection, namespace: config.temporalNamespace });
  return {
    connection,
    client,
    async ping(timeoutMs = 2_000) {
      await connection.withDeadline(Date.now() + timeoutMs, () =>
        connection.workflowService.getSystemInfo({}),
      );
    },
    close: () => connection.close(),
  };
}

/** Search attributes our workflows set, so an operator filters runs in the Temporal Web UI. */
export const SEARCH_ATTRIBUTES = {
  FetchplaneAccountId: 'Keyword',
  FetchplaneStatus: 'Keyword',
  FetchplaneState: 'Keyword',
  FetchplaneJobId: 'Keyword',
} as const;
