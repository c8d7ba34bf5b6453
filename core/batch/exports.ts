/**
 * Exports of a run: one file with every task of the run (NDJSON, one object per task with its body,
 * or CSV), written by an activity into chunks (heartbeating after each, so a killed worker's export is
 * taken up elsewhere within the heartbeat time-out) and served through a capability link as a stream,
 * a few chunks in memory at a time. A repeated activity rewrites the same chunks (same ids), so a crash
 * mid-write only costs the time.
 */
import type { Db } from 'mongodb';
import { batchCollections, CONTENT_CHUNK, ids, pendingResult, readResultDocs, readSlices, type ExportDoc, type SliceDoc, type TaskResult } from './store';
import { readBody } from './read';
import { createRunReader, isDeleted } from './runs';

const TEXT_TYPES = new Set(['html', 'json', 'markdown', 'plaintext']);

/**
 * One CSV cell. A cell a spreadsheet would read as a formula (leading `=`, `+`, `-`, `@`, tab or CR)
 * gets a leading `'`, so an export opened in a spreadsheet shows the text rather than running it.
 */
export const csvField = (raw: string): string => {
  const value = /^[=+\-@\t\r]/.test(raw) ? `'${raw}` : raw;
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
};

async function bodyOf(db: Db, runId: string, slice: SliceDoc, index: number, item: TaskResult): Promise<{ text: string; base64: boolean }> {
  if (item.status !== 'successful' || item.fetchedBy === undefined) return { text: '', base64: false };
  const body = await readBody(db, runId, slice, index, item);
  const base64 = !TEXT_TYPES.has(item.type ?? 'html');
  return { text: base64 ? body.toString('base64') : body.toString('utf8'), base64 };
}

export async function writeExport(db: Db, exportId: string, progress: (chunks: number) => void = () => undefined): Promise<void> {
  const collections = batchCollections(db);
  const { exports, runs, jobs, contents } = collections;
  const doc = await exports.findOne({ _id: exportId });
  if (!doc || doc.status === 'completed') return;
  await exports.updateOne({ _id: exportId }, { $set: { status: 'running' } });
  const run = await runs.findOne({ _id: doc.run_id });
  const job = await jobs.findOne({ _id: doc.job_id });
  if (!run || !job) {
    await exports.updateOne({ _id: exportId }, { $set: { status: 'failed', error: 'The run no longer exists.' } });
    return;
  }
  let buffered: Buffer[] = [];
  let bufferedSize = 0;
  let chunk = 0;
  let size = 0;
  const flush = async (): Promise<void> => {
    if (bufferedSize === 0) return;
    const data = Buffer.concat(buffered);
    await contents.replaceOne({ _id: ids.exportChunk(exportId, chunk) }, { run_id: run._id, data }, { upsert: true });
    chunk++;
    size += data.length;
    progress(chunk);
    buffered = [];
    bufferedSize = 0;
  };
  const write = async (line: string): Promise<void> => {
    const bytes = Buffer.from(line, 'utf8');
    buffered.push(bytes);
    bufferedSize += bytes.length;
    if (bufferedSize >= CONTENT_CHUNK) await flush();
  };
  if (doc.format === 'csv') await write('task_id,url,external_id,status,type,error_code,error_detail,content_encoding,content\r\n');
  for (let n = 0; n < job.slice_count; n += 10) {
    const numbers = Array.from({ length: Math.min(10, job.slice_count - n) }, (_, index) => n + index);
    const [sliceDocs, resultDocs] = await Promise.all([
      readSlices(collections, numbers.map((k) => ids.slice(job._id, k))),
      readResultDocs(collections, numbers.map((k) => ids.result(run._id, k))),
    ]);
    const resultOf = new Map(resultDocs.map((result) => [result.n, result]));
    for (const slice of sliceDocs.sort((a, b) => a.n - b.n)) {
      // Also between chunks: a slice of failed tasks may write little (heartbeats are throttled by Temporal's SDK).
      progress(chunk);
      for (let index = 0; index < slice.tasks.length; index++) {
        const task = slice.tasks[index];
        const item = resultOf.get(slice.n)?.items[index] ?? pendingResult();
        const body = await bodyOf(db, run._id, slice, index, item);
        const record = {
          task_id: ids.task(slice.n, index),
          url: task?.url ?? '',
          external_id: task?.externalId ?? null,
          status: item.status,
          type: item.type ?? null,
          error: item.error ?? null,
          content_encoding: body.base64 ? 'base64' : 'utf-8',
          content: item.status === 'successful' ? body.text : null,
        };
        if (doc.format === 'csv') {
          const fields = [record.task_id, record.url, record.external_id ?? '', record.status, record.type ?? '', item.error?.code ?? '', item.error?.detail ?? '', record.content_encoding, record.content ?? ''];
          await write(`${fields.map(csvField).join(',')}\r\n`);
        } else {
          await write(`${JSON.stringify(record)}\n`);
        }
      }
    }
  }
  await flush();
  await exports.updateOne({ _id: exportId }, { $set: { status: 'completed', size, chunks: chunk } });
}

/** Chunks read at once while an export is served: what one download holds in memory. */
const READ_AHEAD = 4;

/** An export's file: its chunks in order, read a few at a time as the reader takes them. */
export async function* readExport(db: Db, doc: ExportDoc): AsyncGenerator<Buffer> {
  const { contents } = batchCollections(db);
  for (let from = 0; from < doc.chunks; from += READ_AHEAD) {
    const wanted = Array.from({ length: Math.min(READ_AHEAD, doc.chunks - from) }, (_, index) => ids.exportChunk(doc._id, from + index));
    const found = await contents.find({ _id: { $in: wanted } }).toArray();
    const byId = new Map(found.map((item) => [item._id, item]));
    for (const id of wanted) yield Buffer.from((byId.get(id)?.data as unknown as { buffer?: Uint8Array } | undefined)?.buffer ?? new Uint8Array(0));
  }
}

/** An export is served only while its job and run are: a deleted one's link dies at once, not at the next sweep. */
export async function exportStillServed(db: Db, doc: ExportDoc): Promise<boolean> {
  const { jobs } = batchCollections(db);
  const [job, view] = await Promise.all([jobs.findOne({ _id: doc.job_id }, { projection: { status: 1 } }), createRunReader(db).one({ _id: doc.run_id })]);
  return Boolean(job && job.status !== 'deleted' && view && !isDeleted(view));
}
