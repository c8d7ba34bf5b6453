/**
 * Batch storage. A job's tasks are written in slices (one document per `SLICE_SIZE` tasks of one
 * add-tasks call), and a run's results in one document per slice, written once when the slice is
 * done: a 100,000-task job is 400 task documents and 400 result documents per run, not 200,000
 * rows. Every write is an insert or a compare-and-set keyed so that a retried activity neither
 * duplicates nor loses a result.
 *
 *   batch_jobs ─< batch_slices (tasks)            one per SLICE_SIZE tasks
 *       └─< batch_runs ─< batch_results           one per slice and run
 *                     ─< blob_chunks              its bodies: packs of small bodies of a slice, a
 *                                                 large body whole (run, task, attempt); bodies.ts
 *                     ─< batch_exports            one per export, its file a blob of the export
 *
 * `batch_contents` holds what was stored before the blob store (core/jobs/blobs.ts): read, never written.
 */
import type { Collection, Db } from 'mongodb';
import type { IndexRegistration } from '../db';
import type { ChargeDoc } from '../jobs/charges';
import type { JobSchedule } from './schedules';

/** Tasks per slice: the unit of storage, of work (one activity) and of billing (one hold). */
export const SLICE_SIZE = 250;
export const MAX_TASKS_PER_CALL = 10_000;
export const MAX_TASKS_PER_JOB = 100_000;
/** Largest piece of a body stored in one document (bytes). */
export const CONTENT_CHUNK = 4 * 1024 * 1024;
/**
 * Bodies under PACK_BODY_LIMIT are stored together, up to about PACK_SIZE per document: one insert for
 * many small pages (the store's cost is per document), while reading one body reads at most one pack.
 */
export const PACK_BODY_LIMIT = 32 * 1024;
export const PACK_SIZE = 256 * 1024;

export type JobStatus = 'open' | 'closed' | 'deleted';
/** A run's status as the clients know it; a pause is `pause_state`, beside it. */
export type RunStatus = 'pending' | 'running' | 'completed' | 'failed' | 'stopped' | 'deleted';
export type TaskStatus = 'pending' | 'processing' | 'successful' | 'failed';
export type ResultType = 'html' | 'json' | 'markdown' | 'plaintext' | 'pdf';

export interface WebhookSetting {
  url: string;
  signature: boolean;
}

export interface Spend {
  credits: number;
  cost: number;
}

export interface JobDoc {
  _id: string;
  account_id: string;
  key_id: string;
  type: 'regular' | 'scheduled';
  status: JobStatus;
  /** Fetch parameters of every task, as strings (the way the Fetch route receives them). */
  params: Record<string, string>;
  external_id: string | null;
  name: string | null;
  metadata: Record<string, string> | null;
  webhook: WebhookSetting | null;
  /** A scheduled job's schedule (canonical), whether it fires, and when it fires next. */
  schedule: JobSchedule | null;
  schedule_state: 'active' | 'paused' | null;
  next_scheduled_run: Date | null;
  /** Why the last fire of a scheduled job was refused, until one runs (fire-refusals.ts). */
  last_refusal?: string | null;
  task_count: number;
  slice_count: number;
  /** Set while an add-tasks call writes its slices; another call meanwhile is 409. */
  writing: { owner: string; since: Date } | null;
  run_count: number;
  latest_run_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/** One task as stored: `u` URL, `e` external id, `m` metadata, `p` parameters over the job's. */
export interface StoredTask {
  u: string;
  e?: string;
  m?: Record<string, string>;
  p?: Record<string, string>;
}

/** A checked task as stored (the one place its short field names are written). */
export const storedTask = (task: { url: string; externalId?: string; metadata?: Record<string, string>; params?: Record<string, string> }): StoredTask => ({
  u: task.url,
  ...(task.externalId ? { e: task.externalId } : {}),
  ...(task.metadata && Object.keys(task.metadata).length > 0 ? { m: task.metadata } : {}),
  ...(task.params && Object.keys(task.params).length > 0 ? { p: task.params } : {}),
});

export interface SliceDoc {
  _id: string;
  job_id: string;
  /** The slice's number in its job, and the job-wide sequence number of its first task. */
  n: number;
  first: number;
  tasks: StoredTask[];
  created_at: Date;
}

export interface RunStats {
  total: number;
  completed: number;
  successful: number;
  failed: number;
  failure_reasons: Record<string, number>;
  spend: Spend;
}

export interface RunDoc {
  _id: string;
  job_id: string;
  account_id: string;
  key_id: string;
  run_sequence: number;
  status: RunStatus;
  trigger: 'manual' | 'scheduled';
  stats: RunStats;
  /** Slices started so far: slices below it without a result are being processed. */
  next_slice: number;
  /** A rerun: the run whose results it starts from, and the statuses it fetches again. */
  rerun_of: string | null;
  rerun_statuses: TaskStatus[] | null;
  failure_reason: string | null;
  failure_detail: string | null;
  webhook_outcome: string | null;
  created_at: Date;
  updated_at: Date;
  ended_at: Date | null;
}

/**
 * What the API asks of a run: hold (pause), stop, or stop and hide (delete). A document of its own,
 * written by the API only: the run's record is written by the run's activities while it runs, and the
 * store's updates are read-modify-write, so two writers of one document could lose each other's
 * change. Slices read it before each task.
 */
export interface RunControlDoc {
  _id: string;
  job_id: string;
  pause_state: 'active' | 'paused';
  stop: 'stopped' | 'deleted' | null;
  updated_at: Date;
}

/** A result item: `s` status, `t` type, `ct` content type, `z` size, `c` credits, `at` attempt whose content is stored. */
export interface ResultItem {
  s: 'successful' | 'failed' | 'pending';
  t?: ResultType;
  ct?: string;
  z?: number;
  c: number;
  /** The attempt whose content is stored (content ids carry it). */
  at?: number;
  /** The run whose content this is, when inherited by a rerun. */
  src?: string;
  /** A small body is stored in a pack of its slice's bodies: the pack's number and the body's offset in it. */
  pk?: number;
  po?: number;
  /** A failed task's problem: code, status, detail. */
  err?: { code: string; status: number; detail: string };
  /** Attempts: start, end (ms), problem code, credits. */
  h: Array<{ s: number; e: number; err?: string; c: number }>;
  ended: number;
}

export interface ResultDoc {
  _id: string;
  run_id: string;
  job_id: string;
  n: number;
  items: ResultItem[];
  credits: number;
  created_at: Date;
}

/** A document of `batch_contents`: what the blob store replaced (read as a fallback, swept by retention). */
export interface ContentDoc {
  _id: string;
  run_id: string;
  data: Buffer;
}

export interface ExportDoc {
  _id: string;
  job_id: string;
  run_id: string;
  account_id: string;
  format: 'ndjson' | 'csv';
  status: 'pending' | 'running' | 'completed' | 'failed';
  error: string | null;
  size: number;
  chunks: number;
  /** Where its writer stood after its last chunk (exports.ts): a retry resumes from here or from its heartbeat. */
  checkpoint?: { chunks: number; size: number; slice: number; index: number };
  created_at: Date;
  expires_at: Date;
}

export interface JobInputDoc {
  _id: string;
  account_id: string;
  csv: { delimiter: string; quote: string; header: boolean; fields: { url: string | number; external_id?: string | number } };
  uploaded: boolean;
  /** Raw CSV chunks of an input stored before inputs were kept parsed (0 since). */
  chunks: number;
  /** Parsed parts (`<id>:p<n>`), tasks and bytes of the upload, once uploaded. */
  parts?: number;
  tasks?: number;
  bytes?: number;
  /** Why a job cannot be made from the upload (a named column it lacks). */
  refusal?: string;
  created_at: Date;
  expires_at: Date;
}

export const ids = {
  slice: (jobId: string, n: number): string => `${jobId}:${n}`,
  result: (runId: string, n: number): string => `${runId}:${n}`,
  /** Chunk of a large body in `batch_contents`, as stored before the blob store (read only). */
  content: (runId: string, seq: number, attempt: number, chunk: number): string => `${runId}:${seq}:${attempt}:${chunk}`,
  /** A pack of small bodies of one slice, written by one attempt of its activity. */
  pack: (runId: string, n: number, attempt: number, pack: number): string => `${runId}:s${n}:${attempt}:p${pack}`,
  /** Chunk of an export's file in `batch_contents`, as stored before the blob store (read only). */
  exportChunk: (exportId: string, chunk: number): string => `${exportId}:${chunk}`,
  inputChunk: (inputId: string, chunk: number): string => `${inputId}:${chunk}`,
  /** A task id names its slice and its place there, so a task is found with one look-up. */
  task: (n: number, index: number): string => `t${n}_${index}`,
};

export function taskPlace(taskId: string): { n: number; index: number } | undefined {
  const match = /^t(0|[1-9]\d{0,5})_(0|[1-9]\d{0,3})$/.exec(taskId);
  return match ? { n: Number(match[1]), index: Number(match[2]) } : undefined;
}

/**
 * How slices and results are stored: their arrays as one JSON string. The store's cost grows with the
 * number of fields, not bytes: on FerretDB a result document of 250 items as fields takes about 19 ms
 * of CPU to insert and 28 ms to read, as one string 2.5 and 2.8 ms.
 */
export type SliceRecord = Omit<SliceDoc, 'tasks'> & { tasks: string };
export type ResultRecord = Omit<ResultDoc, 'items'> & { items: string };

export const toSliceRecord = (doc: SliceDoc): SliceRecord => ({ ...doc, tasks: JSON.stringify(doc.tasks) });
export const fromSliceRecord = (record: SliceRecord): SliceDoc => ({ ...record, tasks: JSON.parse(record.tasks) as StoredTask[] });
export const toResultRecord = (doc: ResultDoc): ResultRecord => ({ ...doc, items: JSON.stringify(doc.items) });
export const fromResultRecord = (record: ResultRecord): ResultDoc => ({ ...record, items: JSON.parse(record.items) as ResultItem[] });

export function batchCollections(db: Db) {
  return {
    jobs: db.collection<JobDoc>('batch_jobs'),
    slices: db.collection<SliceRecord>('batch_slices'),
    runs: db.collection<RunDoc>('batch_runs'),
    controls: db.collection<RunControlDoc>('batch_run_controls'),
    results: db.collection<ResultRecord>('batch_results'),
    contents: db.collection<ContentDoc>('batch_contents'),
    exports: db.collection<ExportDoc>('batch_exports'),
    inputs: db.collection<JobInputDoc>('batch_job_inputs'),
    charges: db.collection<ChargeDoc>('batch_charges'),
  };
}

export type BatchCollections = ReturnType<typeof batchCollections>;

/** Slices by `_id`, decoded (absent ones are left out). */
export async function readSlices(collections: BatchCollections, sliceIds: string[]): Promise<SliceDoc[]> {
  return (await collections.slices.find({ _id: { $in: sliceIds } }).toArray()).map(fromSliceRecord);
}

export async function readSlice(collections: BatchCollections, sliceId: string): Promise<SliceDoc | undefined> {
  const record = await collections.slices.findOne({ _id: sliceId });
  return record ? fromSliceRecord(record) : undefined;
}

/** Result documents by `_id`, decoded (absent ones are left out). */
export async function readResultDocs(collections: BatchCollections, resultIds: string[]): Promise<ResultDoc[]> {
  return (await collections.results.find({ _id: { $in: resultIds } }).toArray()).map(fromResultRecord);
}

export async function readResultDoc(collections: BatchCollections, resultId: string): Promise<ResultDoc | undefined> {
  const record = await collections.results.findOne({ _id: resultId });
  return record ? fromResultRecord(record) : undefined;
}

export const BATCH_INDEXES: IndexRegistration = {
  batch_jobs: [{ key: { account_id: 1, _id: -1 }, name: 'account_newest' }],
  batch_job_inputs: [{ key: { account_id: 1 }, name: 'account' }],
  batch_exports: [{ key: { account_id: 1, status: 1 }, name: 'account_status' }],
  batch_runs: [{ key: { job_id: 1, run_sequence: -1 }, name: 'job_newest' }],
};

export const emptyStats = (total = 0): RunStats => ({ total, completed: 0, successful: 0, failed: 0, failure_reasons: {}, spend: { credits: 0, cost: 0 } });

export type { Collection };
