/** One task of a slice: its fetches under the task retry rule, each billed through the slice part's bill. */
import type { Park } from '../../../../engine';
import { retryDelayMs } from '../../../jobs/retry-rules';
import type { SliceBill } from '../../../jobs/charges';
import type { SliceInput } from '../../run-types';
import { pendingResult, type BatchTask, type TaskResult } from '../../store';
import type { TaskOutcome, TaskRunner } from '../../task-runner';
import type { RunControl } from '../run-control';

/** How a task's fetches are retried inside the slice: core/jobs/retry-rules.ts's TASK_RETRY with BATCH_TASK_ATTEMPTS. */
export interface TaskRetry {
  maximumAttempts: number;
  initialInterval: number;
  backoffCoefficient: number;
  maximumInterval: number;
}

export interface TaskDeps {
  runTask: TaskRunner;
  taskRetry: TaskRetry;
  runControl(runId: string): Promise<RunControl>;
}

export interface TaskRun {
  result: TaskResult;
  body?: Buffer;
  refused?: string;
  /** Given up by the service itself (cancelled, shutting down): no outcome, the slice must run again. */
  interrupted?: boolean;
}

/** `park`: waits (at the host, between attempts) run inside it, so the slice's shared slots are given back meanwhile. */
export async function runTask(deps: TaskDeps, bill: SliceBill, params: Record<string, string>, task: BatchTask, input: SliceInput, signal: AbortSignal, park: Park = (wait) => wait(), index = 0): Promise<TaskRun> {
  const attempts: TaskResult['attempts'] = [];
  let outcome: TaskOutcome | undefined;
  for (let attempt = 1; attempt <= deps.taskRetry.maximumAttempts; attempt++) {
    let reserved = 0;
    const startedAt = Date.now();
    outcome = await deps.runTask({
      url: task.url,
      params,
      signal,
      reuseKey: input.accountId,
      park,
      accountId: input.accountId,
      origin: `${input.runId}|${input.n}|${index}`,
      afford: async (credits) => {
        if (credits <= reserved) return true;
        const ok = await bill.need(credits - reserved);
        if (ok) reserved = credits;
        return ok;
      },
    });
    const credits = outcome.ok ? outcome.credits : 0;
    if (reserved > credits) bill.giveBack(reserved - credits);
    attempts.push({ startedAt, endedAt: Date.now(), credits, ...(outcome.ok ? {} : { errorCode: outcome.error.code }) });
    if (outcome.ok || !outcome.retryable || outcome.interrupted || signal.aborted || attempt === deps.taskRetry.maximumAttempts) break;
    await park(() => new Promise((resolve) => setTimeout(resolve, retryDelayMs(deps.taskRetry, attempt))));
    if ((await deps.runControl(input.runId)) === 'stop') break;
  }
  if (!outcome) throw new Error('no attempt was made');
  if (outcome.ok) {
    return {
      result: {
        status: 'successful',
        type: outcome.type,
        contentType: outcome.contentType,
        size: outcome.body.length,
        credits: outcome.credits,
        ...(outcome.change ? { change: outcome.change } : {}),
        attempts,
        endedAt: Date.now(),
      },
      body: outcome.body,
    };
  }
  if (outcome.interrupted || signal.aborted) return { result: pendingResult(), interrupted: true };
  if (outcome.vetoed) return { result: pendingResult(), refused: outcome.error.detail };
  return { result: { status: 'failed', credits: 0, error: outcome.error, attempts, endedAt: Date.now() } };
}
