/**
 * The blob store: bodies kept for a job (a Batch task's page, a pack of small pages, an export's file,
 * a CSV input's parsed parts, a crawl's kept page) as chunks of at most BLOB_CHUNK_BYTES in one
 * collection of their own:
 *
 *   blob_chunks  `<blob id>#<n>`  { blob, kind, owner, n, of?, data }
 *
 * Each chunk names its owner (a Batch run, an export, an input, a crawl), so retention and deletion
 * remove an owner's blobs without knowing how the owner names them. There are no head documents and
 * no transactions: a chunk is inserted under a unique id and never changed, so a retried writer either
 * finds its chunk there (the same bytes: ignored) or adds it. A blob written whole carries its chunk
 * count on chunk 0, inserted after the others, so a reader that finds chunk 0 finds them all. A blob
 * written a chunk at a time (an export's file) has its count kept by its owner's record, and a chunk
 * written again replaces the earlier one, so a writer that resumes after a crash may rewrite the
 * chunks after its last checkpoint.
 */
import type { Collection, Db } from 'mongodb';
import { insertIgnoringDuplicates, isDuplicateKey, type IndexRegistration } from '../../base/db';

/** Largest chunk of a blob (bytes): well under the store's document limit. */
export const BLOB_CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * What owns a blob: retention keeps a blob as long as its owner's record. Change tracking's owners
 * name a record and a generation of it (`change_track`: `<track>|<gen>`, `change_crawl`:
 * `<record>|<crawl id>`), alive while the record names that generation (core/changes/retention.ts).
 */
export type BlobOwnerKind = 'batch_run' | 'batch_export' | 'batch_input' | 'crawl' | 'change_track' | 'change_crawl';

export interface BlobOwner {
  kind: BlobOwnerKind;
  id: string;
}

export interface BlobChunkDoc {
  _id: string;
  blob: string;
  kind: BlobOwnerKind;
  owner: string;
  n: number;
  /** On chunk 0 of a blob written whole: how many chunks it has. */
  of?: number;
  data: Buffer;
}

export const BLOB_INDEXES: IndexRegistration = {
  blob_chunks: [{ key: { owner: 1 }, name: 'owner' }],
};

export const blobChunkId = (blob: string, n: number): string => `${blob}#${n}`;

/** Bytes of a stored binary field (the driver answers a `Binary`, a test may hand a Buffer). */
export function bytesOf(data: unknown): Buffer {
  if (Buffer.isBuffer(data)) return data;
  const inner = (data as { buffer?: Uint8Array } | null | undefined)?.buffer;
  return inner ? Buffer.from(inner.buffer, inner.byteOffset, inner.byteLength) : Buffer.alloc(0);
}

export function blobCollection(db: Db): Collection<BlobChunkDoc> {
  return db.collection<BlobChunkDoc>('blob_chunks');
}

export class Blobs {
  private readonly chunks: Collection<BlobChunkDoc>;

  constructor(
    db: Db,
    readonly chunkBytes = BLOB_CHUNK_BYTES,
  ) {
    this.chunks = blobCollection(db);
  }

  /** The chunk documents of a blob written whole (chunk 0 carries the count). */
  pieces(owner: BlobOwner, blob: string, data: Buffer): BlobChunkDoc[] {
    const of = Math.max(1, Math.ceil(data.length / this.chunkBytes));
    return Array.from({ length: of }, (_, n) => ({
      _id: blobChunkId(blob, n),
      blob,
      kind: owner.kind,
      owner: owner.id,
      n,
      ...(n === 0 ? { of } : {}),
      data: data.subarray(n * this.chunkBytes, (n + 1) * this.chunkBytes),
    }));
  }

  /** Stores a blob whole; its chunks after the first go in first. Answers its chunk count. */
  async put(owner: BlobOwner, blob: string, data: Buffer): Promise<number> {
    const docs = this.pieces(owner, blob, data);
    await this.insert(docs.slice(1));
    await this.insert(docs.slice(0, 1));
    return docs.length;
  }

  /** Inserts chunk documents of several blobs at once (a writer's batch); ones already there are kept. */
  async insert(docs: BlobChunkDoc[]): Promise<void> {
    await insertIgnoringDuplicates(this.chunks, docs);
  }

  /** Stores chunk `n` of a blob written a chunk at a time; an earlier write of that chunk is replaced. */
  async putChunk(owner: BlobOwner, blob: string, n: number, data: Buffer): Promise<void> {
    const doc: BlobChunkDoc = { _id: blobChunkId(blob, n), blob, kind: owner.kind, owner: owner.id, n, data };
    try {
      await this.chunks.insertOne(doc);
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      await this.chunks.replaceOne({ _id: doc._id }, doc);
    }
  }

  /** A blob written whole, joined; undefined when it is not there (never written, or removed). */
  async read(blob: string): Promise<Buffer | undefined> {
    return (await this.readMany([blob])).get(blob);
  }

  /** Blobs written whole, joined, by id (one look-up for their first chunks); absent ones are left out. */
  async readMany(blobs: string[]): Promise<Map<string, Buffer>> {
    const joined = new Map<string, Buffer>();
    if (blobs.length === 0) return joined;
    const firsts = await this.chunks.find({ _id: { $in: blobs.map((blob) => blobChunkId(blob, 0)) } }).toArray();
    for (const first of firsts) {
      const of = first.of ?? 1;
      if (of <= 1) {
        joined.set(first.blob, bytesOf(first.data));
        continue;
      }
      const rest = await this.readChunks(first.blob, 1, of - 1);
      if (rest.every((chunk) => chunk !== undefined)) joined.set(first.blob, Buffer.concat([bytesOf(first.data), ...(rest as Buffer[])]));
    }
    return joined;
  }

  /** Chunks `from` .. `from + count - 1` of a blob, in order (undefined for one that is missing). */
  async readChunks(blob: string, from: number, count: number): Promise<Array<Buffer | undefined>> {
    if (count <= 0) return [];
    const wanted = Array.from({ length: count }, (_, index) => blobChunkId(blob, from + index));
    const found = new Map((await this.chunks.find({ _id: { $in: wanted } }).toArray()).map((doc) => [doc._id, bytesOf(doc.data)]));
    return wanted.map((id) => found.get(id));
  }

  /** Whether chunk 0 of a blob is there (a blob written whole is then complete). */
  async has(blob: string): Promise<boolean> {
    return (await this.chunks.countDocuments({ _id: blobChunkId(blob, 0) }, { limit: 1 })) > 0;
  }

  /** The blobs an owner holds (their ids), from the chunks' owner index. */
  async ofOwner(owner: string): Promise<string[]> {
    const docs = await this.chunks.find({ owner }, { projection: { blob: 1, n: 1 } }).toArray();
    return [...new Set(docs.map((doc) => doc.blob))];
  }

  /** Removes blobs by id (every chunk of each); answers the chunks removed. */
  async remove(owner: string, blobs: string[]): Promise<number> {
    if (blobs.length === 0) return 0;
    return (await this.chunks.deleteMany({ owner, blob: { $in: blobs } })).deletedCount;
  }

  /** Removes every blob of these owners (job deletion, a refused upload); answers the chunks removed. */
  async removeOwners(owners: string[]): Promise<number> {
    if (owners.length === 0) return 0;
    return (await this.chunks.deleteMany({ owner: { $in: owners } })).deletedCount;
  }
}

/**
 * Retention: removes the chunks whose owner has no record any more, a batch of `_id`s at a time.
 * `living` answers which of the owners of one kind still have a record; it is asked again just
 * before each batch goes, so an owner created during the sweep is never touched.
 */
export async function sweepOrphanBlobs(
  db: Db,
  batch: number,
  beat: () => void,
  living: (kind: BlobOwnerKind, owners: string[]) => Promise<Set<string>>,
): Promise<number> {
  const chunks = blobCollection(db);
  let removed = 0;
  let pending: Array<Pick<BlobChunkDoc, '_id' | 'kind' | 'owner'>> = [];
  const flush = async (): Promise<void> => {
    const orphans: string[] = [];
    const kinds = new Set(pending.map((doc) => doc.kind));
    for (const kind of kinds) {
      const ofKind = pending.filter((doc) => doc.kind === kind);
      const alive = await living(kind, [...new Set(ofKind.map((doc) => doc.owner))]);
      for (const doc of ofKind) if (!alive.has(doc.owner)) orphans.push(doc._id);
    }
    if (orphans.length > 0) removed += (await chunks.deleteMany({ _id: { $in: orphans } })).deletedCount;
    pending = [];
    beat();
  };
  for await (const doc of chunks.find({}, { projection: { _id: 1, kind: 1, owner: 1 }, batchSize: batch })) {
    pending.push(doc);
    if (pending.length >= batch) await flush();
  }
  if (pending.length > 0) await flush();
  return removed;
}
