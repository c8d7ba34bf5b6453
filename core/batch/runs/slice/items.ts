/**
 * Where a slice part starts: the results the last part stored, or (part 0) every task pending but for
 * what a rerun keeps from the run it reruns (`sourceRunId` names the run holding the body).
 */
import { WorkFailure } from '../../../jobs/work';
import type { SliceInput } from '../../run-types';
import { ids, pendingResult, type BatchStore, type SliceDoc, type TaskResult } from '../../store';

export async function startingItems(store: BatchStore, input: SliceInput, slice: SliceDoc, part: number): Promise<TaskResult[]> {
  if (part > 0) {
    const last = await store.readResultDoc(ids.part(input.runId, input.n, part - 1));
    if (!last) throw new WorkFailure('slice_missing', `part ${part - 1} of slice ${input.n} of run ${input.runId} is missing`);
    return last.items;
  }
  const inherited = input.rerun ? await inheritedItems(store, input, slice) : new Map<number, TaskResult>();
  return slice.tasks.map((_, index) => inherited.get(index) ?? pendingResult());
}

/** The results a rerun keeps from the run it reruns: every task whose status is not to be fetched again. */
async function inheritedItems(store: BatchStore, input: SliceInput, slice: SliceDoc): Promise<Map<number, TaskResult>> {
  const kept = new Map<number, TaskResult>();
  const rerun = input.rerun;
  if (!rerun) return kept;
  const previous = await store.readResultDoc(ids.result(rerun.of, input.n));
  slice.tasks.forEach((_, index) => {
    const item = previous?.items[index];
    const status = item?.status ?? 'pending';
    if (!item || (rerun.statuses as string[]).includes(status) || status === 'pending') return;
    kept.set(index, { ...item, credits: 0, attempts: [], sourceRunId: item.sourceRunId ?? rerun.of });
  });
  return kept;
}
