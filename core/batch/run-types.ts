/** What the Batch run workflow and its activities pass each other. Pure (the workflow bundle imports it). */
import type { WebhookRetry } from '../webhooks/deliveries';

/** A task's status in a run's results. */
export type TaskStatus = 'pending' | 'processing' | 'successful' | 'failed';

export interface RunInput {
  runId: string;
  jobId: string;
  accountId: string;
  keyId: string;
  /** Tasks fetched at once for this run (the plan's concurrency, at most the worker limit). */
  concurrency: number;
  /** Slices of the job known when the run started, and whether the job is closed. */
  sliceCount: number;
  total: number;
  lastBatch: boolean;
  /** Slices in flight at once (BATCH_SLICES_IN_FLIGHT when the run started; 3 for runs started before it existed). */
  slicesInFlight?: number;
  /** History events after which the run continues as new (BATCH_HISTORY_EVENTS; 4,000 for runs started before it existed). */
  historyLimit?: number;
  /** A rerun fetches again the tasks whose result in `rerunOf` has one of `statuses`. */
  rerun?: { of: string; statuses: TaskStatus[] };
  webhookRetry: WebhookRetry;
  /** Carried over by continue-as-new. */
  state?: RunState;
}

export interface RunState {
  nextSlice: number;
  sliceCount: number;
  total: number;
  lastBatch: boolean;
  stats: RunStats;
  paused: boolean;
  stop?: 'stopped' | 'deleted';
  refused?: string;
  /** Slices that paused part-way, each with the part that goes on with it once the run resumes. */
  pausedSlices?: Array<{ n: number; part: number }>;
}

export interface SliceInput {
  runId: string;
  jobId: string;
  accountId: string;
  keyId: string;
  n: number;
  concurrency: number;
  rerun?: { of: string; statuses: TaskStatus[] };
  /**
   * The part of the slice's work this is: 0 first; a slice that paused goes on as part 1, 2… from the
   * results its last part stored. Absent is 0.
   */
  part?: number;
  /** The workflow takes a paused summary: a pause stores the slice's results so far and returns (every run's slices do). */
  pausable?: true;
  /** The run has halted (stopped, or refused by the account): start no task, store the slice as it stands. */
  closing?: boolean;
}

/** What a slice activity reports back: the slice's counts once it is done, or that it paused. */
export interface SliceSummary {
  n: number;
  tasks: number;
  successful: number;
  failed: number;
  /** Tasks left unfetched: the run was stopped, or the account could not pay. */
  pending: number;
  failureReasons: Record<string, number>;
  credits: number;
  /** The account or key could not pay for a task: the detail of the refusal. */
  refused?: string;
  /**
   * The run was paused: the slice stored its results so far as its part and returned; its counts are
   * not the slice's yet (the workflow counts the summary of the part that ends it).
   */
  paused?: true;
}

export interface RunEndInput {
  runId: string;
  status: 'completed' | 'failed' | 'stopped' | 'deleted';
  stats: RunStats;
  failure?: { reason: string; detail: string };
}

/** What one fire of a scheduled job's Schedule came to. */
export type ScheduledFire =
  | { kind: 'skipped'; reason: string }
  /** The run could not start (or had ended): its end event, when the job has a webhook. */
  | { kind: 'ended'; webhook?: { key: string; eventId: string }; webhookRetry: WebhookRetry }
  | { kind: 'run'; input: RunInput; jobId: string; accountId: string };

export interface Spend {
  credits: number;
  cost: number;
}

export interface RunStats {
  total: number;
  completed: number;
  successful: number;
  failed: number;
  failure_reasons: Record<string, number>;
  spend: Spend;
}

export const emptyStats = (total = 0): RunStats => ({ total, completed: 0, successful: 0, failed: 0, failure_reasons: {}, spend: { credits: 0, cost: 0 } });
