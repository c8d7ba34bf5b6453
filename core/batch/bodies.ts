/**
 * The bodies of a Batch run's tasks, kept in the blob store (core/jobs/blobs.ts) under their run:
 * small ones side by side in packs (one document for many pages; a body is its pack's part), large
 * ones as a blob of their own. Blob ids name the run, the slice or task, and the attempt that fetched
 * them, so attempts never write over each other and a retried write is the same bytes.
 *
 * Bodies stored before the blob store (in `batch_contents`, under the same names) are read from there
 * when the blob store has none.
 */
import type { Db } from 'mongodb';
import { Blobs, bytesOf, type BlobChunkDoc, type BlobOwner } from '../jobs/blobs';
import { batchCollections, CONTENT_CHUNK, ids, PACK_BODY_LIMIT, PACK_SIZE, type ResultItem } from './store';

export const bodyBlobs = {
  /** A pack of small bodies of one slice, written by one attempt of its activity. */
  pack: (runId: string, n: number, attempt: number, pack: number): string => ids.pack(runId, n, attempt, pack),
  /** A large body of task `seq` (job-wide), written by one attempt. */
  body: (runId: string, seq: number, attempt: number): string => `${runId}:${seq}:${attempt}`,
};

export const runOwner = (runId: string): BlobOwner => ({ kind: 'batch_run', id: runId });

/**
 * Stores a slice's bodies for one attempt: small ones in packs, large ones whole; documents are
 * inserted a few MB at a time.
 */
export class BodyWriter {
  private static readonly FLUSH_BYTES = 4 * 1024 * 1024;
  private readonly blobs: Blobs;
  private pending: BlobChunkDoc[] = [];
  private pendingSize = 0;
  private pack: Buffer[] = [];
  private packSize = 0;
  private packNumber = 0;

  constructor(
    db: Db,
    private readonly runId: string,
    private readonly slice: { n: number; first: number },
    private readonly attempt: number,
  ) {
    this.blobs = new Blobs(db, CONTENT_CHUNK);
  }

  /** Stores the body of the task at `index`; a packed body answers where it is in its pack. */
  async add(index: number, body: Buffer): Promise<{ pk: number; po: number } | Record<string, never>> {
    if (body.length < PACK_BODY_LIMIT) {
      const place = { pk: this.packNumber, po: this.packSize };
      this.pack.push(body);
      this.packSize += body.length;
      if (this.packSize >= PACK_SIZE) this.sealPack();
      await this.flushIfFull();
      return place;
    }
    this.push(this.blobs.pieces(runOwner(this.runId), bodyBlobs.body(this.runId, this.slice.first + index, this.attempt), body));
    await this.flushIfFull();
    return {};
  }

  /** Writes what is buffered; the slice's result document may go in once this has returned. */
  async flush(): Promise<void> {
    this.sealPack();
    const docs = this.pending;
    this.pending = [];
    this.pendingSize = 0;
    await this.blobs.insert(docs);
  }

  private sealPack(): void {
    if (this.packSize === 0) return;
    this.push(this.blobs.pieces(runOwner(this.runId), bodyBlobs.pack(this.runId, this.slice.n, this.attempt, this.packNumber), Buffer.concat(this.pack)));
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
export async function readBody(db: Db, runId: string, slice: { n: number; first: number }, index: number, item: ResultItem): Promise<Buffer | undefined> {
  const blobs = new Blobs(db, CONTENT_CHUNK);
  const owner = item.src ?? runId;
  const attempt = item.at ?? 1;
  const size = item.z ?? 0;
  // An empty body takes no room: a pack of nothing but empty bodies is never written.
  if (size === 0) return Buffer.alloc(0);
  if (item.pk !== undefined) {
    const id = bodyBlobs.pack(owner, slice.n, attempt, item.pk);
    const pack = (await blobs.read(id)) ?? (await legacyChunks(db, [id]));
    return pack?.subarray(item.po ?? 0, (item.po ?? 0) + size);
  }
  const count = Math.max(1, Math.ceil(size / CONTENT_CHUNK));
  const chunks = await blobs.readChunks(bodyBlobs.body(owner, slice.first + index, attempt), 0, count);
  if (chunks.every((chunk) => chunk !== undefined)) return Buffer.concat(chunks as Buffer[]);
  if (chunks.some((chunk) => chunk !== undefined)) return undefined;
  return legacyChunks(db, Array.from({ length: count }, (_, chunk) => ids.content(owner, slice.first + index, attempt, chunk)));
}

/** Documents of `batch_contents` (written before the blob store) joined in order; undefined when one is missing. */
async function legacyChunks(db: Db, wanted: string[]): Promise<Buffer | undefined> {
  const docs = await batchCollections(db).contents.find({ _id: { $in: wanted } }).toArray();
  const byId = new Map(docs.map((doc) => [doc._id, bytesOf(doc.data)]));
  if (wanted.some((id) => !byId.has(id))) return undefined;
  return Buffer.concat(wanted.map((id) => byId.get(id) as Buffer));
}
