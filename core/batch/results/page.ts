/**
 * A run's results, a page at a time, and one task's result. Results page by slice: a cursor names the
 * next slice to read, a page reads up to PAGE_SLICES slices (their tasks and the run's results, two
 * `_id $in` look-ups) and keeps the entries the status filter wants. A task whose slice has no result
 * yet is `processing` when the run has started its slice, else `pending`; a successful one past the
 * run's retention window is `expired`. How an entry reads is the API's (api/batch/present-results.ts).
 */
import type { TaskStatus } from '../run-types';
import { ids, type BatchStore, type BatchTask, type JobDoc, type RunDoc, type SliceDoc, type TaskResult } from '../store';
import { isTerminal } from '../runs/records';
import { batchCursors } from './cursors';

/** Slices a page reads at most (1,000 rows of full slices). */
const PAGE_SLICES = 4;
/** Slices a filtered page may read before it answers (possibly with fewer rows) and a cursor. */
const SCAN_SLICES = 100;

export type ResultFilter = 'all' | TaskStatus;

/** One task of a run, as its results list it. */
export interface ResultEntry {
  taskId: string;
  /** The task as submitted (absent only if its slice lost it). */
  task: BatchTask | undefined;
  /** Its outcome in the run, once its slice has stored one. */
  item: TaskResult | undefined;
  /** `expired`: successful, but past the run's retention window (no body any more). */
  status: TaskStatus | 'expired';
  /** When the task was submitted, and when its outcome (else the run) last changed. */
  createdAt: Date;
  updatedAt: Date;
}

export interface ResultPage {
  entries: ResultEntry[];
  nextCursor: string | null;
}

function statusOf(item: TaskResult | undefined, run: RunDoc, n: number): TaskStatus {
  if (item && item.status !== 'pending') return item.status;
  if (!item && !isTerminal(run.status) && n < run.next_slice) return 'processing';
  return 'pending';
}

/** The task at `index` of `slice` in `run`, with its status (`expired` when the run's window has closed). */
function resultEntry(run: RunDoc, slice: SliceDoc, index: number, item: TaskResult | undefined, expired: boolean): ResultEntry {
  const ran = statusOf(item, run, slice.n);
  return {
    taskId: ids.task(slice.n, index),
    task: slice.tasks[index],
    item,
    status: ran === 'successful' && expired ? 'expired' : ran,
    createdAt: slice.created_at,
    updatedAt: item?.endedAt ? new Date(item.endedAt) : (run.updated_at ?? run.created_at),
  };
}

export async function readResultPage(store: BatchStore, job: JobDoc, run: RunDoc, filter: ResultFilter, from: number, expired: boolean): Promise<ResultPage> {
  const entries: ResultEntry[] = [];
  let n = from;
  const limit = Math.min(job.slice_count, from + SCAN_SLICES);
  while (n < limit && entries.length < 1_000) {
    const numbers = Array.from({ length: Math.min(PAGE_SLICES, limit - n) }, (_, index) => n + index);
    const [sliceDocs, resultDocs] = await Promise.all([
      store.readSlices(numbers.map((k) => ids.slice(job._id, k))),
      store.readResultDocs(numbers.map((k) => ids.result(run._id, k))),
    ]);
    const sliceOf = new Map(sliceDocs.map((doc) => [doc.n, doc]));
    const resultOf = new Map(resultDocs.map((doc) => [doc.n, doc]));
    for (const k of numbers) {
      const slice = sliceOf.get(k);
      if (!slice) continue;
      const items = resultOf.get(k)?.items;
      slice.tasks.forEach((_, index) => {
        const entry = resultEntry(run, slice, index, items?.[index], expired);
        // An expired task still succeeded: the clients' `successful` filter returns it.
        if (filter === 'all' || entry.status === filter || (filter === 'successful' && entry.status === 'expired')) entries.push(entry);
      });
    }
    n += numbers.length;
  }
  return { entries, nextCursor: n < job.slice_count ? batchCursors.results.encode(run._id, n) : null };
}

/** One task's slice and result item, or undefined when the job has no such task. */
export async function findTask(store: BatchStore, job: JobDoc, run: RunDoc, place: { n: number; index: number }) {
  if (place.n >= job.slice_count) return undefined;
  const [slice, result] = await Promise.all([store.readSlice(ids.slice(job._id, place.n)), store.readResultDoc(ids.result(run._id, place.n))]);
  if (!slice || place.index >= slice.tasks.length) return undefined;
  return { slice, seq: slice.first + place.index, item: result?.items[place.index] };
}
