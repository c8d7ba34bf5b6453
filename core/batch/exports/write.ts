/**
 * Exports of a run: one file with every task of the run (NDJSON, one object per task with its body,
 * or CSV), written by an activity as a blob of the export (core/jobs/blobs.ts) a chunk at a time, and
 * served through a capability link as a stream, a few chunks in memory at a time.
 *
 * A chunk ends at a task's line, so the place after each chunk is a checkpoint: which chunk comes
 * next, the bytes so far and the next task. The writer keeps its last checkpoint on the export's
 * record (the export's one writer) and the activity heartbeats it; a retry (a killed worker, a failed
 * write) starts from the later of the two, since Temporal throttles heartbeats: the chunks before it
 * stay as written, the ones after it are written again over whatever the earlier attempt left.
 * read.ts serves the file.
 */
import type { Db } from 'mongodb';
import { Blobs, type BlobOwner } from '../../jobs/blobs';
import { readBody } from '../results/bodies';
import { resultExpired } from '../results/expiry';
import { BatchStore, CONTENT_CHUNK, ids, pendingResult, type RunDoc, type SliceDoc, type TaskResult } from '../store';

const TEXT_TYPES = new Set(['html', 'json', 'markdown', 'plaintext']);

/**
 * One CSV cell. A cell a spreadsheet would read as a formula (leading `=`, `+`, `-`, `@`, tab or CR)
 * gets a leading `'`, so an export opened in a spreadsheet shows the text rather than running it.
 */
export const csvField = (raw: string): string => {
  const value = /^[=+\-@\t\r]/.test(raw) ? `'${raw}` : raw;
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
};

/** Where an export's writer stands after a chunk: what a retry resumes from. */
export interface ExportCheckpoint {
  /** Chunks written (the next chunk's number), and their bytes. */
  chunks: number;
  size: number;
  /** The next task to write: its slice and its index there. */
  slice: number;
  index: number;
}

const START: ExportCheckpoint = { chunks: 0, size: 0, slice: 0, index: 0 };

const later = (a: ExportCheckpoint, b: ExportCheckpoint): ExportCheckpoint => (b.chunks > a.chunks ? b : a);

/** A checkpoint from heartbeat details, or the start when they are not one. */
export function checkpointOf(details: unknown): ExportCheckpoint {
  const value = details as Partial<Record<keyof ExportCheckpoint, unknown>> | null | undefined;
  const whole = (field: unknown): field is number => typeof field === 'number' && Number.isSafeInteger(field) && field >= 0;
  if (!value || !whole(value.chunks) || !whole(value.size) || !whole(value.slice) || !whole(value.index)) return START;
  return { chunks: value.chunks, size: value.size, slice: value.slice, index: value.index };
}

export interface ExportWriting {
  /** Where the previous attempt stood (its last heartbeat); the start when absent. */
  resume?: ExportCheckpoint;
  /** Called with the last checkpoint after each chunk, and between slices. */
  progress?: (checkpoint: ExportCheckpoint) => void;
  /** Ends the writing (the activity was cancelled): it throws at the next task. */
  signal?: AbortSignal;
  chunkBytes?: number;
  /** Results past this many days after their run ended are `expired` (no body). */
  retentionDays?: number;
}

export const exportOwner = (exportId: string): BlobOwner => ({ kind: 'batch_export', id: exportId });

type Body = { text: string; base64: boolean; expired: boolean };

async function bodyOf(db: Db, run: RunDoc, slice: SliceDoc, index: number, item: TaskResult, retentionDays: number | undefined): Promise<Body> {
  if (item.status !== 'successful' || item.fetchedBy === undefined) return { text: '', base64: false, expired: false };
  const body = retentionDays !== undefined && resultExpired(run, retentionDays) ? undefined : await readBody(db, run._id, slice, index, item);
  if (!body) return { text: '', base64: false, expired: true };
  const base64 = !TEXT_TYPES.has(item.type ?? 'html');
  return { text: base64 ? body.toString('base64') : body.toString('utf8'), base64, expired: false };
}

/** Writes export `exportId`'s file (the database's Batch store holds it), resuming where `writing` or the record says. */
export async function writeExport(db: Db, exportId: string, writing: ExportWriting = {}): Promise<void> {
  const store = BatchStore.of(db);
  const { exports, runs, jobs } = store;
  const blobs = new Blobs(db, writing.chunkBytes ?? CONTENT_CHUNK);
  const progress = writing.progress ?? (() => undefined);
  const doc = await exports.findOne({ _id: exportId });
  if (!doc || doc.status === 'completed') return;
  if (doc.status !== 'running') await exports.updateOne({ _id: exportId }, { $set: { status: 'running' } });
  const run = await runs.findOne({ _id: doc.run_id });
  const job = await jobs.findOne({ _id: doc.job_id });
  if (!run || !job) {
    await exports.updateOne({ _id: exportId }, { $set: { status: 'failed', error: 'The run no longer exists.' } });
    return;
  }
  let at: ExportCheckpoint = later(writing.resume ?? START, checkpointOf(doc.checkpoint));
  let buffered: Buffer[] = [];
  let bufferedSize = 0;
  const flush = async (next: { slice: number; index: number }): Promise<void> => {
    if (bufferedSize === 0) return;
    const data = Buffer.concat(buffered);
    await blobs.putChunk(exportOwner(exportId), exportId, at.chunks, data);
    at = { chunks: at.chunks + 1, size: at.size + data.length, ...next };
    await exports.updateOne({ _id: exportId }, { $set: { checkpoint: at } });
    progress(at);
    buffered = [];
    bufferedSize = 0;
  };
  const write = (line: string): void => {
    const bytes = Buffer.from(line, 'utf8');
    buffered.push(bytes);
    bufferedSize += bytes.length;
  };
  if (doc.format === 'csv' && at.chunks === 0) write('task_id,url,external_id,status,type,error_code,error_detail,content_encoding,content\r\n');
  const from = Math.floor(at.slice / 10) * 10;
  for (let n = from; n < job.slice_count; n += 10) {
    const numbers = Array.from({ length: Math.min(10, job.slice_count - n) }, (_, index) => n + index).filter((k) => k >= at.slice);
    const [sliceDocs, resultDocs] = await Promise.all([
      store.readSlices(numbers.map((k) => ids.slice(job._id, k))),
      store.readResultDocs(numbers.map((k) => ids.result(run._id, k))),
    ]);
    const resultOf = new Map(resultDocs.map((result) => [result.n, result]));
    for (const slice of sliceDocs.sort((a, b) => a.n - b.n)) {
      // Also between chunks: a slice of failed tasks may write little (heartbeats are throttled by Temporal's SDK).
      progress(at);
      const first = slice.n === at.slice ? at.index : 0;
      for (let index = first; index < slice.tasks.length; index++) {
        if (writing.signal?.aborted) throw new Error(`export ${exportId} was cancelled at chunk ${at.chunks}`);
        const task = slice.tasks[index];
        const item = resultOf.get(slice.n)?.items[index] ?? pendingResult();
        const body = await bodyOf(db, run, slice, index, item, writing.retentionDays);
        const status = body.expired ? 'expired' : item.status;
        const record = {
          task_id: ids.task(slice.n, index),
          url: task?.url ?? '',
          external_id: task?.externalId ?? null,
          status,
          type: item.type ?? null,
          error: item.error ?? null,
          content_encoding: body.base64 ? 'base64' : 'utf-8',
          content: status === 'successful' ? body.text : null,
        };
        if (doc.format === 'csv') {
          const fields = [record.task_id, record.url, record.external_id ?? '', record.status, record.type ?? '', item.error?.code ?? '', item.error?.detail ?? '', record.content_encoding, record.content ?? ''];
          write(`${fields.map(csvField).join(',')}\r\n`);
        } else {
          write(`${JSON.stringify(record)}\n`);
        }
        if (bufferedSize >= blobs.chunkBytes) await flush({ slice: slice.n, index: index + 1 });
      }
    }
  }
  await flush({ slice: job.slice_count, index: 0 });
  await exports.updateOne({ _id: exportId }, { $set: { status: 'completed', size: at.size, chunks: at.chunks } });
}
