/**
 * What Batch stores, as the domain reads it: a job, its task slices, its runs and their controls, a
 * run's results per slice, exports and CSV inputs. store.ts opens the collections, ids.ts names the
 * documents, codec.ts writes slices and results in their compact stored form.
 *
 *   batch_jobs ─< batch_slices (tasks)            one per SLICE_SIZE tasks
 *       └─< batch_runs ─< batch_results           one per slice and run, and one per part a paused
 *                     │                           slice stored before it went on
 *                     ├─ batch_run_controls       what the API asks of the run (pause, stop, delete)
 *                     ├─< blob_chunks             its bodies: packs of small bodies of a slice, a
 *                     │                           large body whole (run, task, part, attempt)
 *                     └─< batch_exports           one per export, its file a blob of the export
 *   batch_job_inputs ─< blob_chunks               a CSV input's parsed parts
 *   batch_charges                                 a slice part's bill marker (core/jobs/charges.ts)
 *
 * A job's tasks are written in slices (one document per `SLICE_SIZE` tasks of one add-tasks call),
 * and a run's results in one document per slice, written once when the slice is done: a 100,000-task
 * job is 400 task documents and 400 result documents per run, not 200,000 rows. Every write is an
 * insert or a compare-and-set keyed so that a retried activity neither duplicates nor loses a result.
 */
import type { RunStats, TaskStatus } from '../run-types';
import type { JobSchedule } from '../schedules/parse';

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
  /** `track_changes`: the page against its URL's previous version (core/changes). */
  change?: 'new' | 'same' | 'changed';
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
  /** Parsed parts (`<id>:p<n>`), tasks and bytes of the upload, once uploaded. */
  parts?: number;
  tasks?: number;
  bytes?: number;
  /** Why a job cannot be made from the upload (a named column it lacks). */
  refusal?: string;
  created_at: Date;
  expires_at: Date;
}

export { emptyStats, type RunStats, type Spend, type TaskStatus } from '../run-types';
