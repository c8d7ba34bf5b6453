/**
 * An export's file as it is served: its chunks in order, read a few at a time as the reader takes
 * them, while its job and run are still served.
 */
import type { Db } from 'mongodb';
import { Blobs } from '../../jobs/blobs';
import { createRunReader, isDeleted } from '../runs/view';
import type { BatchStore, ExportDoc } from '../store';

/** Chunks read at once while an export is served: what one download holds in memory. */
const READ_AHEAD = 4;

/** An export's file: its chunks in order, read a few at a time as the reader takes them. */
export async function* readExport(db: Db, doc: ExportDoc): AsyncGenerator<Buffer> {
  const blobs = new Blobs(db);
  for (let from = 0; from < doc.chunks; from += READ_AHEAD) {
    const count = Math.min(READ_AHEAD, doc.chunks - from);
    const chunks = await blobs.readChunks(doc._id, from, count);
    for (let index = 0; index < count; index++) yield chunks[index] ?? Buffer.alloc(0);
  }
}

/** An export is served only while its job and run are: a deleted one's link dies at once, not at the next sweep. */
export async function exportStillServed(store: BatchStore, doc: ExportDoc): Promise<boolean> {
  const [job, view] = await Promise.all([store.jobs.findOne({ _id: doc.job_id }, { projection: { status: 1 } }), createRunReader(store).one({ _id: doc.run_id })]);
  return Boolean(job && job.status !== 'deleted' && view && !isDeleted(view));
}
