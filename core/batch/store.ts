/**
 * Batch storage. A job's tasks are written in slices (one document per `SLICE_SIZE` tasks of one
 * add-tasks call), and a run's results in one document per slice, written once when the slice is
 * done: a 100,000-task job is 400 task documents and 400 result documents per run, not 200,000
 * rows. Every write is an insert or a compare-and-set keyed so that a retried activity neither
 * duplicates nor loses a result.
 *
 *   batch_jobs ─< batch_slices (tasks)            one per SLICE_SIZE tasks
 *       └─< batch_runs ─< batch_results           one per slice and run, and one per part a paused
 *                                                 slice stored before it went on
 *                     ─< blob_chunks              its bodies: packs of small bodies of a slice, a
 *                                                 large body whole (run, task, part, attempt); bodies.ts
 *                     ─< batch_exports            one per export, its file a blob of the export
 *
 * `batch_contents` holds what was stored before the blob store (core/jobs/blobs.ts): read, never written.
 */
import { emptyStats, type RunStats, type Spend, type TaskStatus } from './run-types';
import type { Collection, Db } from 'mongodb';
import type { IndexRegistration } from '../../base/db';
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
export type ResultType = 'html' | 'json' | 'markdown' | 'plaintext' | 'pdf';

export interface WebhookSetting {
  url: string;
  signature: boolean;
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

/** One task of a job: its URL, external id, metadata and Fetch parameters over the job's. */
export interface BatchTask {
  url: string;
  externalId?: string;
  metadata?: Record<string, string>;
  params?: Record<string, string>;
}

/** A checked task, its empty parts left out (what is stored). */
export const batchTask = (task: BatchTask): BatchTask => ({
  url: task.url,
  ...(task.externalId ? { externalId: task.externalId } : {}),
  ...(task.metadata && Object.keys(task.metadata).length > 0 ? { metadata: task.metadata } : {}),
  ...(task.params && Object.keys(task.params).length > 0 ? { params: task.params } : {}),
});

export interface SliceDoc {
  _id: string;
  job_id: string;
  /** The slice's number in its job, and the job-wide sequence number of its first task. */
  n: number;
  first: number;
  tasks: BatchTask[];
  created_at: Date;
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

/** Who fetched a task: the part of its slice's work (a paused slice goes on in a new part) and that part's attempt. */
export interface FetchedBy {
  part: number;
  attempt: number;
}

/** One task's outcome in a run. */
export interface TaskResult {
  status: 'successful' | 'failed' | 'pending';
  type?: ResultType;
  contentType?: string;
  /** The body's size in bytes. */
  size?: number;
  credits: number;
  /** Which part and attempt fetched the task: the ids of its stored body carry them, and the part's bill counts it. */
  fetchedBy?: FetchedBy;
  /** The run whose body this is, when inherited by a rerun. */
  sourceRunId?: string;
  /** A small body is stored in a pack of its slice's bodies: the pack's number and the body's offset in it. */
  pack?: { number: number; offset: number };
  /** A failed task's problem. */
  error?: { code: string; status: number; detail: string };
  attempts: Array<{ startedAt: number; endedAt: number; errorCode?: string; credits: number }>;
  /** When the task got its outcome (ms; 0 while pending). */
  endedAt: number;
}

export const pendingResult = (): TaskResult => ({ status: 'pending', credits: 0, attempts: [], endedAt: 0 });

/**
 * A slice's results in a run: written once when the slice is done. A slice that paused stores what
 * it has so far under a part's id first (`ids.part`, `part` set), which the next part starts from.
 */
export interface ResultDoc {
  _id: string;
  run_id: string;
  job_id: string;
  n: number;
  items: TaskResult[];
  credits: number;
  /** Set on a paused slice's partial results: the part that stored them. */
  part?: number;
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
  /** The results a paused slice stored at the end of part `part` (the part after it starts from them). */
  part: (runId: string, n: number, part: number): string => `${runId}:${n}:part${part}`,
  /** A large body's blob, written by one part and attempt of its slice's activity (part 0 ids predate parts). */
  body: (runId: string, seq: number, by: FetchedBy): string => `${runId}:${seq}:${writerOf(by)}`,
  /** Chunk of a large body in `batch_contents`, as stored before the blob store (read only): its blob's id and the chunk. */
  content: (runId: string, seq: number, by: FetchedBy, chunk: number): string => `${ids.body(runId, seq, by)}:${chunk}`,
  /** A pack of small bodies of one slice, written by one part and attempt of its activity: its blob's id, and its id in `batch_contents` before. */
  pack: (runId: string, n: number, by: FetchedBy, pack: number): string => `${runId}:s${n}:${writerOf(by)}:p${pack}`,
  /** Chunk of an export's file in `batch_contents`, as stored before the blob store (read only). */
  exportChunk: (exportId: string, chunk: number): string => `${exportId}:${chunk}`,
  inputChunk: (inputId: string, chunk: number): string => `${inputId}:${chunk}`,
  /** A task id names its slice and its place there, so a task is found with one look-up. */
  task: (n: number, index: number): string => `t${n}_${index}`,
};

/** The writer's token in a body's id: the attempt alone for part 0 (as stored before parts), else part and attempt. */
const writerOf = (by: FetchedBy): string => (by.part === 0 ? `${by.attempt}` : `${by.part}.${by.attempt}`);

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

/*
 * Stored field names. Tasks: `u` URL, `e` external id, `m` metadata, `p` parameters. Results: `s`
 * status, `t` type, `ct` content type, `z` size, `c` credits, `at` attempt and `pt` part that fetched
 * it (its body's ids carry them; `pt` absent is part 0), `src` run owning the body, `pk`/`po` pack and
 * offset, `err` problem, `h` attempts (`s` start, `e` end, `err` code, `c` credits), `ended`. Only
 * this file knows them: everything else works with BatchTask and TaskResult.
 */
interface TaskRecord {
  u: string;
  e?: string;
  m?: Record<string, string>;
  p?: Record<string, string>;
}

interface TaskResultRecord {
  s: TaskResult['status'];
  t?: ResultType;
  ct?: string;
  z?: number;
  c: number;
  at?: number;
  pt?: number;
  src?: string;
  pk?: number;
  po?: number;
  err?: { code: string; status: number; detail: string };
  h: Array<{ s: number; e: number; err?: string; c: number }>;
  ended: number;
}

const toTaskRecord = (task: BatchTask): TaskRecord => ({
  u: task.url,
  ...(task.externalId !== undefined ? { e: task.externalId } : {}),
  ...(task.metadata !== undefined ? { m: task.metadata } : {}),
  ...(task.params !== undefined ? { p: task.params } : {}),
});

const fromTaskRecord = (record: TaskRecord): BatchTask => ({
  url: record.u,
  ...(record.e !== undefined ? { externalId: record.e } : {}),
  ...(record.m !== undefined ? { metadata: record.m } : {}),
  ...(record.p !== undefined ? { params: record.p } : {}),
});

const toTaskResultRecord = (item: TaskResult): TaskResultRecord => ({
  s: item.status,
  ...(item.type !== undefined ? { t: item.type } : {}),
  ...(item.contentType !== undefined ? { ct: item.contentType } : {}),
  ...(item.size !== undefined ? { z: item.size } : {}),
  c: item.credits,
  ...(item.fetchedBy ? { at: item.fetchedBy.attempt, ...(item.fetchedBy.part > 0 ? { pt: item.fetchedBy.part } : {}) } : {}),
  ...(item.sourceRunId !== undefined ? { src: item.sourceRunId } : {}),
  ...(item.pack ? { pk: item.pack.number, po: item.pack.offset } : {}),
  ...(item.error ? { err: item.error } : {}),
  h: item.attempts.map((attempt) => ({ s: attempt.startedAt, e: attempt.endedAt, ...(attempt.errorCode !== undefined ? { err: attempt.errorCode } : {}), c: attempt.credits })),
  ended: item.endedAt,
});

const fromTaskResultRecord = (record: TaskResultRecord): TaskResult => ({
  status: record.s,
  ...(record.t !== undefined ? { type: record.t } : {}),
  ...(record.ct !== undefined ? { contentType: record.ct } : {}),
  ...(record.z !== undefined ? { size: record.z } : {}),
  credits: record.c,
  ...(record.at !== undefined ? { fetchedBy: { part: record.pt ?? 0, attempt: record.at } } : {}),
  ...(record.src !== undefined ? { sourceRunId: record.src } : {}),
  ...(record.pk !== undefined ? { pack: { number: record.pk, offset: record.po ?? 0 } } : {}),
  ...(record.err ? { error: record.err } : {}),
  attempts: (record.h ?? []).map((attempt) => ({ startedAt: attempt.s, endedAt: attempt.e, ...(attempt.err !== undefined ? { errorCode: attempt.err } : {}), credits: attempt.c })),
  endedAt: record.ended ?? 0,
});

export const toSliceRecord = (doc: SliceDoc): SliceRecord => ({ ...doc, tasks: JSON.stringify(doc.tasks.map(toTaskRecord)) });
export const fromSliceRecord = (record: SliceRecord): SliceDoc => ({ ...record, tasks: (JSON.parse(record.tasks) as TaskRecord[]).map(fromTaskRecord) });
export const toResultRecord = (doc: ResultDoc): ResultRecord => ({ ...doc, items: JSON.stringify(doc.items.map(toTaskResultRecord)) });
export const fromResultRecord = (record: ResultRecord): ResultDoc => ({ ...record, items: (JSON.parse(record.items) as TaskResultRecord[]).map(fromTaskResultRecord) });

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


export type { Collection };

export { emptyStats, type RunStats, type Spend, type TaskStatus };
