/**
 * One slice of a Batch run: fetch its tasks (at most `concurrency` at once, within the worker's
 * limit), store each body, then write the slice's result document and settle its bill. Safe to run
 * again after a crash or a kill:
 *
 *   result document already there ─> settle the bill if that did not land ─> its summary
 *   else ─> fetch every task (bodies keyed by run, task and attempt) ─> insert results ─> settle
 *
 * Only a finished attempt stores its results: one that was cancelled (its heartbeats no longer
 * reached the server, the worker shuts down) or whose fetches were cut short by the service itself
 * throws instead, leaving its hold open for the next attempt (same hold id, grown again, never
 * reserved twice), so the slice is fetched again rather than recorded with tasks never tried. A
 * stop or an account that cannot pay does store the slice as it stands: the run ends stopped or
 * failed, never completed.
 *
 * The bill of a slice is one hold under an id derived from (run, slice), settled once behind a
 * marker (core/jobs/charges.ts), so a success is billed once however often the slice runs. A
 * rerun copies the results it keeps from the run it reruns (`src` names the run holding the body).
 */
import { Context } from '@temporalio/activity';
import type { Db } from 'mongodb';
import type { Accounts } from '../../core/accounts';
import type { SliceInput, SliceSummary } from '../../core/batch/run-types';
import { BodyWriter } from '../../core/batch/bodies';
import { batchCollections, ids, readResultDoc, readSlice, toResultRecord, type ResultDoc, type ResultItem, type SliceDoc, type StoredTask } from '../../core/batch/store';
import type { JobCharges, SliceBill } from '../../core/jobs/charges';
import { isDuplicateKey } from '../../core/db';
import type { Semaphore } from '../../core/semaphore';
import type { TaskOutcome, TaskRunner } from '../deps';
import { activityFailure, interruption } from '../failures';
import { TaskSignals } from '../task-signals';

export interface SliceDeps {
  db: Db;
  accounts: Accounts;
  charges: JobCharges;
  runTask: TaskRunner;
  /** Limits a task takes a turn of, in order: the run's window in this worker, then the worker's. */
  limits: Semaphore[];
  attempts: number;
  /** What the run's record asks: go on, hold while paused, or stop (read from the record, cached briefly). */
  runControl(runId: string): Promise<RunControl>;
  /** Pause before another attempt of a task (ms); tests make it short. */
  retryDelayMs: (attempt: number) => number;
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

/** How often a paused slice looks whether it may go on (it heartbeats meanwhile). */
const PAUSE_POLL_MS = 1_000;

export async function runBatchSlice(deps: SliceDeps, input: SliceInput): Promise<SliceSummary> {
  const context = Context.current();
  const attempt = context.info.attempt;
  const collections = batchCollections(deps.db);
  const heartbeat = setInterval(() => context.heartbeat(), 2_000);
  const signals = new TaskSignals(context.cancellationSignal);
  try {
    const payer = await deps.accounts.principalFor(input.accountId, input.keyId);
    const stored = await readResultDoc(collections, ids.result(input.runId, input.n));
    if (stored) {
      // An earlier attempt stored the results: make sure its bill landed, then report them.
      const bill = await deps.charges.open(input.runId, input.n, payer, true, 0);
      if (!bill.alreadyBilled && stored.credits > 0) {
        await bill.need(stored.credits);
        await bill.settle(stored.credits);
      }
      return summarize(input.n, stored.items, stored.credits);
    }
    const slice = await readSlice(collections, ids.slice(input.jobId, input.n));
    if (!slice) throw activityFailure('slice_missing', `slice ${input.n} of job ${input.jobId} is missing`);
    const job = await collections.jobs.findOne({ _id: input.jobId }, { projection: { params: 1 } });
    const inherited = input.rerun ? await inheritedItems(deps.db, input, slice) : new Map<number, ResultItem>();

    const items: ResultItem[] = slice.tasks.map((_, index) => inherited.get(index) ?? { s: 'pending', c: 0, h: [], ended: 0 });
    let refused: string | undefined;
    let interrupted = false;
    const todo = slice.tasks.map((_, index) => index).filter((index) => !inherited.has(index));
    // One reservation for the whole slice at its cheapest price (one ledger write, not one per task);
    // dearer configurations grow it, and an account that cannot pay for all of it grows task by task.
    const bill = await deps.charges.open(input.runId, input.n, payer, attempt > 1, todo.length);
    const bodies = new BodyWriter(deps.db, input.runId, slice, attempt);
    let next = 0;
    const lane = async (): Promise<void> => {
      for (;;) {
        if (refused !== undefined || interrupted || context.cancellationSignal.aborted || next >= todo.length) return;
        // A pause holds the lanes between tasks (tasks in flight finish); a stop ends them.
        const control = await deps.runControl(input.runId);
        if (control === 'stop') return;
        if (control === 'pause') {
          await new Promise((resolve) => setTimeout(resolve, PAUSE_POLL_MS));
          continue;
        }
        const index = todo[next++];
        if (index === undefined) return;
        const task = slice.tasks[index] as StoredTask;
        const releases: Array<() => void> = [];
        for (const limit of deps.limits) releases.push(await limit.acquire());
        const release = (): void => releases.reverse().forEach((free) => free());
        const taskSignal = signals.open();
        try {
          const item = await runTask(deps, bill, { ...(job?.params ?? {}), ...(task.p ?? {}) }, task, input, taskSignal.signal);
          if (item.interrupted) {
            interrupted = true;
            continue;
          }
          if (item.refused !== undefined) {
            refused = item.refused;
            continue;
          }
          const stored = item.body ? await bodies.add(index, item.body) : {};
          items[index] = { ...item.result, at: attempt, ...stored };
        } finally {
          taskSignal.done();
          release();
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(input.concurrency, todo.length)) }, lane));
    if (interrupted || context.cancellationSignal.aborted) {
      throw interruption(context.cancellationSignal, `slice ${input.n} of run ${input.runId} was interrupted before every task had an outcome`);
    }
    await bodies.flush();

    const credits = items.reduce((sum, item) => sum + (item.src === undefined ? item.c : 0), 0);
    const doc: ResultDoc = { _id: ids.result(input.runId, input.n), run_id: input.runId, job_id: input.jobId, n: input.n, items, credits, created_at: new Date() };
    try {
      await collections.results.insertOne(toResultRecord(doc));
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      // Another attempt stored this slice first: its results (and bill) are the ones that count.
      const winner = await readResultDoc(collections, doc._id);
      await bill.settle(0);
      return summarize(input.n, winner?.items ?? items, winner?.credits ?? 0, refused);
    }
    await bill.settle(bill.alreadyBilled ? 0 : credits);
    return summarize(input.n, items, credits, refused);
  } finally {
    clearInterval(heartbeat);
    signals.close();
  }
}

interface TaskRun {
  result: ResultItem;
  body?: Buffer;
  refused?: string;
  /** Given up by the service itself (cancelled, shutting down): no outcome, the slice must run again. */
  interrupted?: boolean;
}

async function runTask(
  deps: SliceDeps,
  bill: SliceBill,
  params: Record<string, string>,
  task: StoredTask,
  input: SliceInput,
  signal: AbortSignal,
): Promise<TaskRun> {
  const history: ResultItem['h'] = [];
  let outcome: TaskOutcome | undefined;
  for (let attempt = 1; attempt <= deps.attempts; attempt++) {
    let reserved = 0;
    const started = Date.now();
    outcome = await deps.runTask({
      url: task.u,
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
    history.push({ s: started, e: Date.now(), c: credits, ...(outcome.ok ? {} : { err: outcome.error.code }) });
    if (outcome.ok || !outcome.retryable || outcome.interrupted || signal.aborted || attempt === deps.attempts) break;
    await new Promise((resolve) => setTimeout(resolve, deps.retryDelayMs(attempt)));
    if ((await deps.runControl(input.runId)) === 'stop') break;
  }
  if (!outcome) throw new Error('no attempt was made');
  if (outcome.ok) {
    return {
      result: { s: 'successful', t: outcome.type, ct: outcome.contentType, z: outcome.body.length, c: outcome.credits, h: history, ended: Date.now() },
      body: outcome.body,
    };
  }
  if (outcome.interrupted || signal.aborted) return { result: { s: 'pending', c: 0, h: [], ended: 0 }, interrupted: true };
  if (outcome.vetoed) return { result: { s: 'pending', c: 0, h: [], ended: 0 }, refused: outcome.error.detail };
  return { result: { s: 'failed', c: 0, err: outcome.error, h: history, ended: Date.now() } };
}

/** The results a rerun keeps from the run it reruns: every task whose status is not to be fetched again. */
async function inheritedItems(db: Db, input: SliceInput, slice: SliceDoc): Promise<Map<number, ResultItem>> {
  const kept = new Map<number, ResultItem>();
  const rerun = input.rerun;
  if (!rerun) return kept;
  const previous = await readResultDoc(batchCollections(db), ids.result(rerun.of, input.n));
  slice.tasks.forEach((_, index) => {
    const item = previous?.items[index];
    const status = item?.s ?? 'pending';
    if (!item || (rerun.statuses as string[]).includes(status) || status === 'pending') return;
    kept.set(index, { ...item, c: 0, h: [], src: item.src ?? rerun.of });
  });
  return kept;
}

function summarize(n: number, items: ResultItem[], credits: number, refused?: string): SliceSummary {
  const failureReasons: Record<string, number> = {};
  let successful = 0;
  let failed = 0;
  let pending = 0;
  for (const item of items) {
    if (item.s === 'successful') successful++;
    else if (item.s === 'failed') {
      failed++;
      const reason = reasonOf(item.err?.code ?? 'internal');
      failureReasons[reason] = (failureReasons[reason] ?? 0) + 1;
    } else pending++;
  }
  return { n, tasks: items.length, successful, failed, pending, failureReasons, credits, ...(refused !== undefined ? { refused } : {}) };
}
