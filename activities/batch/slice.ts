/**
 * One slice of a Batch run: fetch its tasks (at most `concurrency` at once, within the worker's
 * limit), store each body, then write the slice's result document and settle its bill. Safe to run
 * again after a crash or a kill:
 *
 *   end of this part already stored ─> settle its bill if that did not land ─> its summary
 *   else ─> start from the last part's results and this part's progress (heartbeats)
 *        ─> fetch the tasks left (bodies keyed by run, task, part and attempt)
 *        ─> paused: store the results so far as this part, settle ─> `paused`
 *        ─> else: insert the slice's results, settle ─> its summary
 *
 * A pause ends the slice at a task boundary (tasks in flight finish): it stores what it has under
 * its part's id and returns, and the workflow schedules the next part once the run resumes; nothing
 * waits in an activity meanwhile. Each part bills the tasks it fetched under its own hold and marker
 * (core/jobs/charges.ts: part 0 under the slice's, so slices of earlier runs settle as they did), so
 * a success is billed once however often a part runs, and a long pause holds no credits.
 *
 * Progress: every few seconds the slice flushes the bodies it has and heartbeats the tasks whose
 * bodies have landed, with their results; a retried attempt takes them from its heartbeat details
 * and fetches only the rest. An attempt that was cancelled (its heartbeats no longer reached the
 * server, the worker shuts down) or whose fetches were cut short by the service itself throws, its
 * hold left open for the next attempt (same hold id, grown again, never reserved twice). A stop or an
 * account that cannot pay stores the slice as it stands: the run ends stopped or failed, never
 * completed.
 *
 * A rerun copies the results it keeps from the run it reruns (`sourceRunId` names the run holding
 * the body).
 */
import { Context } from '@temporalio/activity';
import type { Db } from 'mongodb';
import type { Accounts } from '../../core/accounts';
import type { SliceInput, SliceSummary } from '../../core/batch/run-types';
import { BodyWriter } from '../../core/batch/bodies';
import { batchCollections, ids, pendingResult, readResultDoc, readSlice, toResultRecord, type BatchTask, type FetchedBy, type ResultDoc, type SliceDoc, type TaskResult } from '../../core/batch/store';
import type { JobCharges, SliceBill } from '../../core/jobs/charges';
import { isDuplicateKey } from '../../base/db';
import type { Semaphore } from '../../base/semaphore';
import { retryDelayMs } from '../../core/jobs/retry-rules';
import type { TaskOutcome, TaskRunner } from '../deps';
import { activityFailure, interruption } from '../failures';
import { TaskSignals } from '../../core/jobs/task-signals';

/** How a task's fetches are retried inside the slice: workflows/retry-policies.ts's TASK_RETRY with BATCH_TASK_ATTEMPTS. */
export interface TaskRetry {
  maximumAttempts: number;
  initialInterval: number;
  backoffCoefficient: number;
  maximumInterval: number;
}

export interface SliceDeps {
  db: Db;
  accounts: Accounts;
  charges: JobCharges;
  runTask: TaskRunner;
  /** Limits a task takes a turn of, in order: the run's window in this worker, then the worker's. */
  limits: Semaphore[];
  taskRetry: TaskRetry;
  /** What the run's record asks: go on, pause, or stop (read from the record, cached briefly). */
  runControl(runId: string): Promise<RunControl>;
}

/** Reasons counted in `stats.failure_reasons`, from the problem codes of failed tasks. */
const REASONS: Record<string, string> = {
  RESP001: 'blocked',
  RESP002: 'not_found',
  REQS001: 'forbidden_target',
  REQS002: 'blocked',
  REQS004: 'invalid_param_value',
  RESP005: 'too_large',
  RESP007: 'dns_error',
  payment_required: 'insufficient_credits',
};
export const reasonOf = (code: string): string => REASONS[code] ?? code.toLowerCase();

export type RunControl = 'go' | 'pause' | 'stop';

/** How often a slice flushes its bodies and heartbeats its progress (ms). */
const PROGRESS_MS = 2_000;
/** How often a paused slice of a run scheduled before slices returned on a pause looks whether it may go on. */
const LEGACY_PAUSE_POLL_MS = 1_000;

/** What a slice's heartbeats carry: the tasks this part has finished, their bodies stored. */
export interface SliceProgress {
  part: number;
  done: Array<[number, TaskResult]>;
}

/** The bill of part `part` of slice `n`: part 0 under the slice's own key (slices before parts settle as they did). */
const billKey = (n: number, part: number): number | string => (part === 0 ? n : `${n}.${part}`);

/** Credits of the tasks part `part` fetched (inherited results cost nothing): what that part's bill settles. */
const creditsOfPart = (items: TaskResult[], part: number): number =>
  items.reduce((sum, item) => sum + (item.sourceRunId === undefined && item.fetchedBy?.part === part ? item.credits : 0), 0);

const progressOf = (details: unknown, part: number): Array<[number, TaskResult]> => {
  const progress = details as Partial<SliceProgress> | undefined;
  return progress && progress.part === part && Array.isArray(progress.done) ? progress.done : [];
};

export async function runBatchSlice(deps: SliceDeps, input: SliceInput): Promise<SliceSummary> {
  const context = Context.current();
  const part = input.part ?? 0;
  const by: FetchedBy = { part, attempt: context.info.attempt };
  const collections = batchCollections(deps.db);
  const signals = new TaskSignals(context.cancellationSignal);
  let progress: ReturnType<typeof setInterval> | undefined;
  try {
    const payer = await deps.accounts.principalFor(input.accountId, input.keyId);
    // This part's end stored by an earlier attempt: make sure its bill landed, then report it.
    for (const [id, paused] of [[ids.result(input.runId, input.n), false], [ids.part(input.runId, input.n, part), true]] as const) {
      const stored = await readResultDoc(collections, id);
      if (!stored) continue;
      const owed = creditsOfPart(stored.items, part);
      const bill = await deps.charges.open(input.runId, billKey(input.n, part), payer, true, 0);
      if (!bill.alreadyBilled && owed > 0) {
        await bill.need(owed);
        await bill.settle(owed);
      }
      return { ...summarize(input.n, stored.items, stored.credits), ...(paused ? { paused: true as const } : {}) };
    }
    const slice = await readSlice(collections, ids.slice(input.jobId, input.n));
    if (!slice) throw activityFailure('slice_missing', `slice ${input.n} of job ${input.jobId} is missing`);
    const job = await collections.jobs.findOne({ _id: input.jobId }, { projection: { params: 1 } });
    const items = await startingItems(deps.db, input, slice, part);
    const restored = progressOf(context.info.heartbeatDetails, part);
    for (const [index, item] of restored) if (index >= 0 && index < items.length) items[index] = item;

    let refused: string | undefined;
    let interrupted = false;
    let paused = false;
    const todo = items.flatMap((item, index) => (item.status === 'pending' ? [index] : []));
    // One reservation for the part at its cheapest price (one ledger write, not one per task);
    // dearer configurations grow it, and an account that cannot pay for all of it grows task by task.
    const bill = await deps.charges.open(input.runId, billKey(input.n, part), payer, by.attempt > 1, input.closing ? 0 : todo.length);
    const bodies = new BodyWriter(deps.db, input.runId, slice, by);
    // Tasks finished in this attempt; heartbeats name those whose bodies have landed, with the restored ones.
    const finished = new Map<number, { body: boolean }>();
    let reporting = false;
    const report = async (): Promise<void> => {
      if (reporting) return;
      reporting = true;
      try {
        await bodies.flush().catch(() => undefined);
        const done: SliceProgress['done'] = restored.slice();
        for (const [index, { body }] of finished) if (!body || bodies.isDurable(index)) done.push([index, items[index] as TaskResult]);
        context.heartbeat({ part, done } satisfies SliceProgress);
      } finally {
        reporting = false;
      }
    };
    progress = setInterval(() => void report().catch(() => undefined), PROGRESS_MS);
    let next = 0;
    const lane = async (): Promise<void> => {
      for (;;) {
        if (refused !== undefined || interrupted || paused || input.closing || context.cancellationSignal.aborted || next >= todo.length) return;
        // A stop ends the lanes between tasks (tasks in flight finish), and so does a pause when the
        // workflow takes a paused slice.
        const control = await deps.runControl(input.runId);
        if (control === 'stop') return;
        if (control === 'pause') {
          if (input.pausable) {
            paused = true;
            return;
          }
          await new Promise((resolve) => setTimeout(resolve, LEGACY_PAUSE_POLL_MS));
          continue;
        }
        const index = todo[next++];
        if (index === undefined) return;
        const task = slice.tasks[index] as BatchTask;
        const releases: Array<() => void> = [];
        for (const limit of deps.limits) releases.push(await limit.acquire());
        const release = (): void => releases.reverse().forEach((free) => free());
        const taskSignal = signals.open();
        try {
          const item = await runTask(deps, bill, { ...(job?.params ?? {}), ...(task.params ?? {}) }, task, input, taskSignal.signal);
          if (item.interrupted) {
            interrupted = true;
            continue;
          }
          if (item.refused !== undefined) {
            refused = item.refused;
            continue;
          }
          const stored = item.body ? await bodies.add(index, item.body) : {};
          items[index] = { ...item.result, fetchedBy: by, ...stored };
          finished.set(index, { body: item.body !== undefined });
        } finally {
          taskSignal.done();
          release();
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(input.concurrency, todo.length)) }, lane));
    clearInterval(progress);
    if (interrupted || context.cancellationSignal.aborted) {
      // The bodies stored so far stay named by the last heartbeat: the next attempt starts from them.
      await report().catch(() => undefined);
      throw interruption(context.cancellationSignal, `slice ${input.n} of run ${input.runId} was interrupted before every task had an outcome`);
    }
    await bodies.flush();

    // Paused with tasks left: this part's results go under its own id, and the next part starts from them.
    const pausing = paused && refused === undefined && items.some((item) => item.status === 'pending');
    const credits = items.reduce((sum, item) => sum + (item.sourceRunId === undefined ? item.credits : 0), 0);
    const doc: ResultDoc = {
      _id: pausing ? ids.part(input.runId, input.n, part) : ids.result(input.runId, input.n),
      run_id: input.runId,
      job_id: input.jobId,
      n: input.n,
      items,
      credits,
      ...(pausing ? { part } : {}),
      created_at: new Date(),
    };
    const outcome = (stored: TaskResult[], storedCredits: number): SliceSummary => ({ ...summarize(input.n, stored, storedCredits, refused), ...(pausing ? { paused: true as const } : {}) });
    try {
      await collections.results.insertOne(toResultRecord(doc));
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      // Another attempt stored this first: its results (and bill) are the ones that count.
      const winner = await readResultDoc(collections, doc._id);
      await bill.settle(0);
      return outcome(winner?.items ?? items, winner?.credits ?? 0);
    }
    await bill.settle(bill.alreadyBilled ? 0 : creditsOfPart(items, part));
    return outcome(items, credits);
  } finally {
    clearInterval(progress);
    signals.close();
  }
}

/** Where a part starts: the results the last part stored, or (part 0) pending tasks and what a rerun keeps. */
async function startingItems(db: Db, input: SliceInput, slice: SliceDoc, part: number): Promise<TaskResult[]> {
  if (part > 0) {
    const last = await readResultDoc(batchCollections(db), ids.part(input.runId, input.n, part - 1));
    if (!last) throw activityFailure('slice_missing', `part ${part - 1} of slice ${input.n} of run ${input.runId} is missing`);
    return last.items;
  }
  const inherited = input.rerun ? await inheritedItems(db, input, slice) : new Map<number, TaskResult>();
  return slice.tasks.map((_, index) => inherited.get(index) ?? pendingResult());
}

interface TaskRun {
  result: TaskResult;
  body?: Buffer;
  refused?: string;
  /** Given up by the service itself (cancelled, shutting down): no outcome, the slice must run again. */
  interrupted?: boolean;
}

/** One task: its fetches under the task retry rule, billed through the slice's bill. */
async function runTask(deps: SliceDeps, bill: SliceBill, params: Record<string, string>, task: BatchTask, input: SliceInput, signal: AbortSignal): Promise<TaskRun> {
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
    await new Promise((resolve) => setTimeout(resolve, retryDelayMs(deps.taskRetry, attempt)));
    if ((await deps.runControl(input.runId)) === 'stop') break;
  }
  if (!outcome) throw new Error('no attempt was made');
  if (outcome.ok) {
    return {
      result: { status: 'successful', type: outcome.type, contentType: outcome.contentType, size: outcome.body.length, credits: outcome.credits, attempts, endedAt: Date.now() },
      body: outcome.body,
    };
  }
  if (outcome.interrupted || signal.aborted) return { result: pendingResult(), interrupted: true };
  if (outcome.vetoed) return { result: pendingResult(), refused: outcome.error.detail };
  return { result: { status: 'failed', credits: 0, error: outcome.error, attempts, endedAt: Date.now() } };
}

/** The results a rerun keeps from the run it reruns: every task whose status is not to be fetched again. */
async function inheritedItems(db: Db, input: SliceInput, slice: SliceDoc): Promise<Map<number, TaskResult>> {
  const kept = new Map<number, TaskResult>();
  const rerun = input.rerun;
  if (!rerun) return kept;
  const previous = await readResultDoc(batchCollections(db), ids.result(rerun.of, input.n));
  slice.tasks.forEach((_, index) => {
    const item = previous?.items[index];
    const status = item?.status ?? 'pending';
    if (!item || (rerun.statuses as string[]).includes(status) || status === 'pending') return;
    kept.set(index, { ...item, credits: 0, attempts: [], sourceRunId: item.sourceRunId ?? rerun.of });
  });
  return kept;
}

function summarize(n: number, items: TaskResult[], credits: number, refused?: string): SliceSummary {
  const failureReasons: Record<string, number> = {};
  let successful = 0;
  let failed = 0;
  let pending = 0;
  for (const item of items) {
    if (item.status === 'successful') successful++;
    else if (item.status === 'failed') {
      failed++;
      const reason = reasonOf(item.error?.code ?? 'internal');
      failureReasons[reason] = (failureReasons[reason] ?? 0) + 1;
    } else pending++;
  }
  return { n, tasks: items.length, successful, failed, pending, failureReasons, credits, ...(refused !== undefined ? { refused } : {}) };
}
