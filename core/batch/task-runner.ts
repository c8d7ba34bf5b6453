/**
 * How a Batch task is fetched, as the worker receives it: the Fetch route's own parsing, retrieval and
 * shaping behind one function (core/fetch/task.ts builds it), with billing left to the caller.
 */
import type { Park } from '../../engine';

export type TaskResultType = 'html' | 'json' | 'markdown' | 'plaintext' | 'pdf';

export interface TaskFetch {
  url: string;
  /** Fetch parameters as strings, the way the Fetch route receives them. */
  params: Record<string, string>;
  signal: AbortSignal;
  reuseKey: string;
  /** Reserve up to `credits` in total for this task; false: the account cannot pay, do not try. */
  afford(credits: number): Promise<boolean>;
  /** Waits at the task's host run inside it: the slice gives back the run's and the worker's slots meanwhile. */
  park?: Park;
  /** The job's account, and this task's name in its run (`track_changes` records under them; a retried slice finds its own). */
  accountId?: string;
  origin?: string;
}

export type TaskOutcome =
  | { ok: true; contentType: string; body: Buffer; type: TaskResultType; credits: number; change?: 'new' | 'same' | 'changed' }
  | {
      ok: false;
      vetoed: boolean;
      retryable: boolean;
      /** The service gave the task up itself (cancelled, shutting down): not the task's outcome, another attempt must fetch it. */
      interrupted: boolean;
      error: { code: string; status: number; detail: string };
    };

export type TaskRunner = (task: TaskFetch) => Promise<TaskOutcome>;
