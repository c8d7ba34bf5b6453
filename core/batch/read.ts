/**
 * Batch reads, in the shapes the official clients parse (`Job`, `Run`, `TaskResult`,
 * `TaskHistoryResponse`): pure presentation over the stored documents, plus the paging of results.
 *
 * Results page by slice: a cursor names the next slice to read, a page reads up to PAGE_SLICES slices
 * (their tasks and the run's results, two `_id $in` look-ups) and keeps the rows the status filter
 * wants. A task whose slice has no result yet is `processing` when the run has started its slice,
 * else `pending`.
 */
import { parseBoolean } from '../../base/boolean';
import type { Db } from 'mongodb';
import { ERROR_CATALOGUE } from '../../base/errors';
import { batchCollections, ids, readResultDoc, readResultDocs, readSlice, readSlices, type JobDoc, type RunDoc, type SliceDoc, type TaskResult, type TaskStatus } from './store';
import { batchCursors } from './cursors';
import { isTerminal } from './run-records';
import { runStatusOf, type RunView } from './runs';

/** Slices a page reads at most (1,000 rows of full slices). */
const PAGE_SLICES = 4;
/** Slices a filtered page may read before it answers (possibly with fewer rows) and a cursor. */
const SCAN_SLICES = 100;

export interface Presenter {
  docsUrl: string;
  /** A capability URL for the body of task `taskId` of run `runId`. */
  resultUrl(jobId: string, runId: string, taskId: string): string;
}

const iso = (date: Date | null | undefined): string | null => (date ? date.toISOString() : null);

/** Job parameters echoed as strings, the type the clients' `Job.zenrows_params` declares. */
/**
 * A run in the clients' `Run` shape. While it runs, its total follows the job's tasks (an open job
 * grows before the run has counted the new tasks), and `last_batch_received` is whether the job is
 * closed.
 */
export function presentRun(view: RunView, job: Pick<JobDoc, 'status' | 'task_count'>) {
  const { run } = view;
  const status = runStatusOf(view);
  const stats = isTerminal(status) ? run.stats : { ...run.stats, total: Math.max(run.stats.total, job.task_count) };
  return {
    run_id: run._id,
    job_id: run.job_id,
    run_sequence: run.run_sequence,
    status,
    trigger: run.trigger,
    stats,
    last_batch_received: job.status !== 'open',
    pause_state: isTerminal(status) ? 'active' : (view.control?.pause_state ?? 'active'),
    ingest_status: 'done',
    created_at: iso(run.created_at),
    updated_at: iso(run.updated_at),
    ...(run.rerun_of ? { rerun_of: run.rerun_of } : {}),
    ...(run.failure_reason ? { failure_reason: run.failure_reason, failure_detail: run.failure_detail ?? '' } : {}),
    // The end event's delivery: pending while it is retried, then delivered or failed.
    ...(run.webhook_outcome ? { webhook_outcome: run.webhook_outcome } : {}),
  };
}

export function presentJob(job: JobDoc, run: RunView | null) {
  return {
    job_id: job._id,
    type: job.type,
    status: job.status,
    format: formatOf(job.params),
    zenrows_params: job.params,
    ...(job.external_id ? { external_id: job.external_id } : {}),
    ...(job.name ? { name: job.name } : {}),
    ...(job.metadata ? { metadata: job.metadata } : {}),
    webhook: job.webhook,
    ...(job.type === 'scheduled'
      ? { schedule: job.schedule, schedule_state: job.schedule_state ?? 'active', next_scheduled_run: iso(job.next_scheduled_run) }
      : {}),
    task_count: job.task_count,
    latest_run: run ? presentRun(run, job) : null,
    created_at: iso(job.created_at),
    updated_at: iso(job.updated_at),
  };
}

function formatOf(params: Record<string, string>): string {
  const type = params.response_type;
  if (type === 'markdown' || type === 'plaintext' || type === 'pdf') return type;
  // Flags read as Fetch reads them (`true`, `1`, any case).
  const flag = (value: string | undefined): boolean => value !== undefined && parseBoolean(value) === true;
  if (flag(params.json_response) || params.css_extractor || flag(params.autoparse) || params.outputs) return 'json';
  return 'html';
}

export type ResultFilter = 'all' | TaskStatus;

export interface ResultRow {
  task_id: string;
  external_id?: string;
  run_id: string;
  url: string;
  metadata?: Record<string, string>;
  method: 'GET';
  /** `expired`: successful, but past the run's retention window (no `result_url`, its body is 410). */
  status: TaskStatus | 'expired';
  type?: string;
  result_url?: string;
  error?: Record<string, unknown>;
  source_run_id?: string;
  spend: { total: { credits: number; cost: number }; last_attempt: { credits: number; cost: number } };
  created_at: string;
  updated_at: string;
}

export interface ResultPage {
  results: ResultRow[];
  next_cursor: string | null;
}


function statusOf(item: TaskResult | undefined, run: RunDoc, n: number): TaskStatus {
  if (item && item.status !== 'pending') return item.status;
  if (!item && !isTerminal(run.status) && n < run.next_slice) return 'processing';
  return 'pending';
}

export function problemOf(docsUrl: string, error: { code: string; status: number; detail: string }): Record<string, unknown> {
  const entry = (ERROR_CATALOGUE as Record<string, { title: string } | undefined>)[error.code];
  return {
    type: `${docsUrl}/api-error-codes#${error.code}`,
    title: `${entry?.title ?? 'Task failed'} (${error.code})`,
    status: error.status,
    code: error.code,
    detail: error.detail,
  };
}

export function presentResult(presenter: Presenter, job: JobDoc, run: RunDoc, slice: SliceDoc, index: number, item: TaskResult | undefined, perCredit: number, expired = false): ResultRow {
  const task = slice.tasks[index];
  const ran = statusOf(item, run, slice.n);
  const status = ran === 'successful' && expired ? 'expired' : ran;
  const credits = item?.credits ?? 0;
  const last = item?.attempts.at(-1)?.credits ?? 0;
  const cost = (value: number): number => Math.round(value * perCredit * 1e6) / 1e6;
  const ended = item?.endedAt ? new Date(item.endedAt).toISOString() : (run.updated_at ?? run.created_at).toISOString();
  return {
    task_id: ids.task(slice.n, index),
    ...(task?.externalId ? { external_id: task.externalId } : {}),
    run_id: run._id,
    url: task?.url ?? '',
    ...(task?.metadata ? { metadata: task.metadata } : {}),
    method: 'GET',
    status,
    ...(status === 'successful' && item?.type ? { type: item.type, result_url: presenter.resultUrl(job._id, run._id, ids.task(slice.n, index)) } : {}),
    ...(status === 'failed' && item?.error ? { error: problemOf(presenter.docsUrl, item.error) } : {}),
    ...(item?.sourceRunId ? { source_run_id: item.sourceRunId } : {}),
    spend: { total: { credits, cost: cost(credits) }, last_attempt: { credits: last, cost: cost(last) } },
    created_at: slice.created_at.toISOString(),
    updated_at: ended,
  };
}

export async function readResults(
  db: Db,
  presenter: Presenter,
  job: JobDoc,
  run: RunDoc,
  filter: ResultFilter,
  from: number,
  perCredit: number,
  expired = false,
): Promise<ResultPage> {
  const collections = batchCollections(db);
  const rows: ResultRow[] = [];
  let n = from;
  const limit = Math.min(job.slice_count, from + SCAN_SLICES);
  while (n < limit && rows.length < 1_000) {
    const numbers = Array.from({ length: Math.min(PAGE_SLICES, limit - n) }, (_, index) => n + index);
    const [sliceDocs, resultDocs] = await Promise.all([
      readSlices(collections, numbers.map((k) => ids.slice(job._id, k))),
      readResultDocs(collections, numbers.map((k) => ids.result(run._id, k))),
    ]);
    const sliceOf = new Map(sliceDocs.map((doc) => [doc.n, doc]));
    const resultOf = new Map(resultDocs.map((doc) => [doc.n, doc]));
    for (const k of numbers) {
      const slice = sliceOf.get(k);
      if (!slice) continue;
      const items = resultOf.get(k)?.items;
      slice.tasks.forEach((_, index) => {
        const row = presentResult(presenter, job, run, slice, index, items?.[index], perCredit, expired);
        // An expired task still succeeded: the clients' `successful` filter returns it.
        if (filter === 'all' || row.status === filter || (filter === 'successful' && row.status === 'expired')) rows.push(row);
      });
    }
    n += numbers.length;
  }
  return { results: rows, next_cursor: n < job.slice_count ? batchCursors.results.encode(run._id, n) : null };
}

/** One task's slice and result item, or undefined when the job has no such task. */
export async function findTask(db: Db, job: JobDoc, run: RunDoc, place: { n: number; index: number }) {
  if (place.n >= job.slice_count) return undefined;
  const collections = batchCollections(db);
  const [slice, result] = await Promise.all([readSlice(collections, ids.slice(job._id, place.n)), readResultDoc(collections, ids.result(run._id, place.n))]);
  if (!slice || place.index >= slice.tasks.length) return undefined;
  return { slice, seq: slice.first + place.index, item: result?.items[place.index] };
}

export function presentHistory(docsUrl: string, item: TaskResult | undefined, perCredit: number) {
  return {
    events: (item?.attempts ?? []).map((attempt, index) => ({
      started_at: new Date(attempt.startedAt).toISOString(),
      ended_at: new Date(attempt.endedAt).toISOString(),
      attempt: index + 1,
      ...(attempt.errorCode
        ? { error: problemOf(docsUrl, { code: attempt.errorCode, status: ERROR_CATALOGUE[attempt.errorCode as keyof typeof ERROR_CATALOGUE]?.status ?? 502, detail: attempt.errorCode === item?.error?.code ? (item?.error?.detail ?? '') : 'The attempt failed.' }) }
        : {}),
      spend: { credits: attempt.credits, cost: Math.round(attempt.credits * perCredit * 1e6) / 1e6 },
    })),
  };
}
