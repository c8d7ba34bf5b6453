/**
 * The bodies of a Batch run's tasks, kept in the blob store (core/jobs/blobs.ts) under their run:
 * small ones side by side in packs (one document for many pages; a body is its pack's part), large
 * ones as a blob of their own. Blob ids name the run, the slice or task, and the part and attempt
 * that fetched them (ids.pack, ids.body), so no writer ever writes over another's body and a retried
 * write is the same bytes.
 */
import type { Db } from 'mongodb';
import { Blobs, type BlobChunkDoc, type BlobOwner } from '../../jobs/blobs';
import { CONTENT_CHUNK, ids, PACK_BODY_LIMIT, PACK_SIZE, type FetchedBy, type TaskResult } from '../store';

export const runOwner = (runId: string): BlobOwner => ({ kind: 'batch_run', id: runId });

/**
 * Stores a slice's bodies for one part and attempt of its activity: small ones in packs, large ones
 * whole; documents are inserted a few MB at a time, and whenever the slice reports its progress. A
 * task's body is durable once a flush that held it has landed: only then may a heartbeat name the
 * task as done.
 */
export class BodyWriter {
  private static readonly FLUSH_BYTES = 4 * 1024 * 1024;
  private readonly blobs: Blobs;
  private pending: BlobChunkDoc[] = [];
  private pendingSize = 0;
  private pack: Buffer[] = [];
  private packSize = 0;
  private packNumber = 0;
  /** Tasks whose bodies are written but not yet flushed, and those flushed. */
  private waiting: number[] = [];
  private readonly durable = new Set<number>();

  constructor(
    db: Db,
    private readonly runId: string,
    private readonly slice: { n: number; first: number },
    private readonly by: FetchedBy,
  ) {
    this.blobs = new Blobs(db, CONTENT_CHUNK);
  }

  /** Stores the body of the task at `index`; a packed body answers where it is in its pack. */
  async add(index: number, body: Buffer): Promise<{ pack?: { number: number; offset: number } }> {
    this.waiting.push(index);
    if (body.length < PACK_BODY_LIMIT) {
      const pack = { number: this.packNumber, offset: this.packSize };
      this.pack.push(body);
      this.packSize += body.length;
      if (this.packSize >= PACK_SIZE) this.sealPack();
      await this.flushIfFull();
      return { pack };
    }
    this.push(this.blobs.pieces(runOwner(this.runId), ids.body(this.runId, this.slice.first + index, this.by), body));
    await this.flushIfFull();
    return {};
  }

  /** Whether the body of the task at `index` has landed in the store. */
  isDurable(index: number): boolean {
    return this.durable.has(index);
  }

  /** Writes what is buffered; the slice's result document may go in once this has returned. */
  async flush(): Promise<void> {
    // Taken at once: what is added while this insert runs goes to the next flush.
    this.sealPack();
    const docs = this.pending;
    const indexes = this.waiting;
    this.pending = [];
    this.pendingSize = 0;
    this.waiting = [];
    try {
      // Written by this attempt before (a retried write): duplicates are the same bytes.
      await this.blobs.insert(docs);
    } catch (error) {
      // Kept for the next flush: a body is never dropped, nor called durable before it landed.
      this.pending = docs.concat(this.pending);
      this.pendingSize += docs.reduce((sum, doc) => sum + doc.data.length, 0);
      this.waiting = indexes.concat(this.waiting);
      throw error;
    }
    for (const index of indexes) this.durable.add(index);
  }

  private sealPack(): void {
    if (this.packSize === 0) return;
    this.push(this.blobs.pieces(runOwner(this.runId), ids.pack(this.runId, this.slice.n, this.by, this.packNumber), Buffer.concat(this.pack)));
    this.pack = [];
    this.packSize = 0;
    this.packNumber++;
  }

  private push(docs: BlobChunkDoc[]): void {
    for (const doc of docs) {
      this.pending.push(doc);
      this.pendingSize += doc.data.length;
    }
  }

  private async flushIfFull(): Promise<void> {
    if (this.pendingSize >= BodyWriter.FLUSH_BYTES) await this.flush();
  }
}

/**
 * The stored body of a successful task at `index` of slice `slice` (its pack's part, or its own
 * blob): undefined when it is not there any more (removed by retention) or was never stored.
 */
export async function readBody(db: Db, runId: string, slice: { n: number; first: number }, index: number, item: TaskResult): Promise<Buffer | undefined> {
  const blobs = new Blobs(db, CONTENT_CHUNK);
  const owner = item.sourceRunId ?? runId;
  const by = item.fetchedBy ?? { part: 0, attempt: 1 };
  const size = item.size ?? 0;
  // An empty body takes no room: a pack of nothing but empty bodies is never written.
  if (size === 0) return Buffer.alloc(0);
  if (item.pack) {
    const pack = await blobs.read(ids.pack(owner, slice.n, by, item.pack.number));
    return pack?.subarray(item.pack.offset, item.pack.offset + size);
  }
  const count = Math.max(1, Math.ceil(size / CONTENT_CHUNK));
  const chunks = await blobs.readChunks(ids.body(owner, slice.first + index, by), 0, count);
  return chunks.every((chunk) => chunk !== undefined) ? Buffer.concat(chunks as Buffer[]) : undefined;
}
