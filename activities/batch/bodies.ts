/**
 * Stores a slice's bodies for one part and attempt of its activity: small ones side by side in packs
 * (one document for many pages), large ones in chunks of their own; documents are inserted a few MB at
 * a time, and whenever the slice reports its progress. Ids name the part and attempt, so no writer
 * ever overwrites another's body. A task's body is durable once a flush that held it has landed: only
 * then may a heartbeat name the task as done.
 */
import type { Db } from 'mongodb';
import { batchCollections, CONTENT_CHUNK, ids, PACK_BODY_LIMIT, PACK_SIZE, type ContentDoc, type FetchedBy } from '../../core/batch/store';
import { insertIgnoringDuplicates } from '../../core/db';

export class BodyWriter {
  private static readonly FLUSH_BYTES = 4 * 1024 * 1024;
  private pending: ContentDoc[] = [];
  private pendingSize = 0;
  private pack: Buffer[] = [];
  private packSize = 0;
  private packNumber = 0;
  /** Tasks whose bodies are written but not yet flushed, and those flushed. */
  private waiting: number[] = [];
  private readonly durable = new Set<number>();

  constructor(
    private readonly db: Db,
    private readonly runId: string,
    private readonly slice: { n: number; first: number },
    private readonly by: FetchedBy,
  ) {}

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
    for (let chunk = 0; chunk * CONTENT_CHUNK < body.length; chunk++) {
      const data = body.subarray(chunk * CONTENT_CHUNK, (chunk + 1) * CONTENT_CHUNK);
      this.push({ _id: ids.content(this.runId, this.slice.first + index, this.by, chunk), run_id: this.runId, data });
    }
    await this.flushIfFull();
    return {};
  }

  /** Whether the body of the task at `index` has landed in the store. */
  isDurable(index: number): boolean {
    return this.durable.has(index);
  }

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
      if (docs.length > 0) await insertIgnoringDuplicates(batchCollections(this.db).contents, docs);
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
    this.push({ _id: ids.pack(this.runId, this.slice.n, this.by, this.packNumber), run_id: this.runId, data: Buffer.concat(this.pack) });
    this.pack = [];
    this.packSize = 0;
    this.packNumber++;
  }

  private push(doc: ContentDoc): void {
    this.pending.push(doc);
    this.pendingSize += doc.data.length;
  }

  private async flushIfFull(): Promise<void> {
    if (this.pendingSize >= BodyWriter.FLUSH_BYTES) await this.flush();
  }
}
