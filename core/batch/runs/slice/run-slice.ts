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
 * (core/jobs/charges.ts; progress.ts names them), so a success is billed once however often a part
 * runs, and a long pause holds no credits.
 *
 * Progress: every few seconds the slice flushes the bodies it has and heartbeats the tasks whose
 * bodies have landed, with their results; a retried attempt takes them from its heartbeat details
 * and fetches only the rest. An attempt that was cancelled (its heartbeats no longer reached the
 * server, the worker shuts down) or whose fetches were cut short by the service itself throws
 * `interrupted` (errors.ts), its hold left open for the next attempt (same hold id, grown again, never
 * reserved twice). A stop or an account that cannot pay stores the slice as it stands: the run ends
 * stopped or failed, never completed.
 *
 * The attempt (its cancellation, number and heartbeats) is handed in by the activity (attempt.ts).
 *
 * A rerun copies the results it keeps from the run it reruns (`sourceRunId` names the run holding
 * the body).
 */
import type { Accounts } from '../../../accounts';
import { isDuplicateKey } from '../../../../base/db';
import { TaskSignals } from '../../../../base/task-signals';
import type { JobCharges } from '../../../jobs/charges';
import { interruption, WorkFailure, type WorkContext } from '../../../jobs/work';
import { BodyWriter } from '../../results/bodies';
import type { SliceInput, SliceSummary } from '../../run-types';
import { ids, type BatchStore, type BatchTask, type FetchedBy, type ResultDoc, type TaskResult } from '../../store';
import type { RunControl } from '../run-control';
import { startingItems } from './items';
import { SliceParking, type SliceLimit, type TaskTurn } from './parking';
import { billKey, creditsOfPart, progressOf, type SliceProgress } from './progress';
import { summarize } from './summary';
import { runTask, type TaskDeps } from './task';

export interface SliceDeps extends TaskDeps {
  store: BatchStore;
  accounts: Accounts;
  charges: JobCharges;
  /** Limits a task takes a turn of, in order: the run's lease (shared by every worker), then the worker's slot. */
  limits: SliceLimit[];
  /** What the run asks: go on, pause, or stop (run-control.ts). */
  runControl(runId: string): Promise<RunControl>;
}

/** How often a slice flushes its bodies and heartbeats its progress (ms). */
const PROGRESS_MS = 2_000;
/** A slice whose every task has waited at its host this long gives up its turn (parking.ts). */
const YIELD_AFTER_MS = 30_000;

export async function runSlice(deps: SliceDeps, input: SliceInput, attempt: WorkContext): Promise<SliceSummary> {
  const part = input.part ?? 0;
  const by: FetchedBy = { part, attempt: attempt.attempt };
  const { store } = deps;
  const signals = new TaskSignals(attempt.signal);
  let progress: ReturnType<typeof setInterval> | undefined;
  try {
    const payer = await deps.accounts.principalFor(input.accountId, input.keyId);
    // This part's end stored by an earlier attempt: make sure its bill landed, then report it.
    for (const [id, paused] of [[ids.result(input.runId, input.n), false], [ids.part(input.runId, input.n, part), true]] as const) {
      const stored = await store.readResultDoc(id);
      if (!stored) continue;
      const owed = creditsOfPart(stored.items, part);
      const bill = await deps.charges.open(input.runId, billKey(input.n, part), payer, true, 0);
      if (!bill.alreadyBilled && owed > 0) {
        await bill.need(owed);
        await bill.settle(owed);
      }
      return { ...summarize(input.n, stored.items, stored.credits), ...(paused ? { paused: true as const } : {}) };
    }
    const slice = await store.readSlice(ids.slice(input.jobId, input.n));
    if (!slice) throw new WorkFailure('slice_missing', `slice ${input.n} of job ${input.jobId} is missing`);
    const job = await store.jobs.findOne({ _id: input.jobId }, { projection: { params: 1 } });
    const items = await startingItems(store, input, slice, part);
    const restored = progressOf(attempt.progress, part);
    for (const [index, item] of restored) if (index >= 0 && index < items.length) items[index] = item;

    let refused: string | undefined;
    let interrupted = false;
    let paused = false;
    const todo = items.flatMap((item, index) => (item.status === 'pending' ? [index] : []));
    // One reservation for the part at its cheapest price (one ledger write, not one per task);
    // dearer configurations grow it, and an account that cannot pay for all of it grows task by task.
    const bill = await deps.charges.open(input.runId, billKey(input.n, part), payer, by.attempt > 1, input.closing ? 0 : todo.length);
    const bodies = new BodyWriter(store.db, input.runId, slice, by);
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
        attempt.heartbeat({ part, done } satisfies SliceProgress);
      } finally {
        reporting = false;
      }
    };
    progress = setInterval(() => void report().catch(() => undefined), PROGRESS_MS);
    let next = 0;
    const parking = new SliceParking({
      limits: deps.limits,
      runControl: () => deps.runControl(input.runId),
      yieldAfterMs: YIELD_AFTER_MS,
      // Every task of the slice waits at its host: the part ends as a pause does, its tasks pending.
      onYield: () => {
        paused = true;
      },
    });
    const lane = async (): Promise<void> => {
      for (;;) {
        if (refused !== undefined || interrupted || paused || input.closing || attempt.signal.aborted || next >= todo.length) return;
        // A stop or a pause ends the lanes between tasks (tasks in flight finish).
        const control = await deps.runControl(input.runId);
        if (control === 'stop') return;
        if (control === 'pause') {
          paused = true;
          return;
        }
        const index = todo[next++];
        if (index === undefined) return;
        const task = slice.tasks[index] as BatchTask;
        // The task's own signal (one listener on the attempt's for all tasks), also while it waits for its slots.
        const taskSignal = signals.open();
        // The task's slots, given back while it waits at its host (parking.ts).
        let turn: TaskTurn;
        try {
          turn = await parking.begin(taskSignal.signal);
        } catch (error) {
          taskSignal.done();
          // Cancelled while waiting for a turn: the attempt ends as interrupted below.
          if (attempt.signal.aborted) return;
          throw error;
        }
        try {
          const item = await runTask(deps, bill, { ...(job?.params ?? {}), ...(task.params ?? {}) }, task, input, AbortSignal.any([taskSignal.signal, turn.signal]), turn.park, index);
          // Its wait was given up (the run stopped, or the slice yields its turn): it stays pending.
          if (item.interrupted && turn.signal.aborted && !taskSignal.signal.aborted) continue;
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
          turn.end();
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(input.concurrency, todo.length)) }, lane)).finally(() => parking.close());
    clearInterval(progress);
    if (interrupted || attempt.signal.aborted) {
      // The bodies stored so far stay named by the last heartbeat: the next attempt starts from them.
      await report().catch(() => undefined);
      throw interruption(attempt.signal, `slice ${input.n} of run ${input.runId} was interrupted before every task had an outcome`);
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
      await store.insertResultDoc(doc);
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      // Another attempt stored this first: its results (and bill) are the ones that count.
      const winner = await store.readResultDoc(doc._id);
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
