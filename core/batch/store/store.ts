/**
 * Batch's collections, behind one object per process: `BatchStore.of(db)` opens them once for that
 * database and every Batch command and query is handed the same store. Slices and results are read
 * through it decoded (codec.ts), never in their stored form.
 */
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey, type IndexRegistration } from '../../../base/db';
import type { ChargeDoc } from '../../jobs/charges';
import { fromResultRecord, fromSliceRecord, toResultRecord, toSliceRecord, type ResultRecord, type SliceRecord } from './codec';
import type { ExportDoc, JobDoc, JobInputDoc, ResultDoc, RunControlDoc, RunDoc, SliceDoc } from './records';

/** The collections by name; the store holds them (tests reach them through here too). */
export function batchCollections(db: Db) {
  return {
    jobs: db.collection<JobDoc>('batch_jobs'),
    slices: db.collection<SliceRecord>('batch_slices'),
    runs: db.collection<RunDoc>('batch_runs'),
    controls: db.collection<RunControlDoc>('batch_run_controls'),
    results: db.collection<ResultRecord>('batch_results'),
    exports: db.collection<ExportDoc>('batch_exports'),
    inputs: db.collection<JobInputDoc>('batch_job_inputs'),
    charges: db.collection<ChargeDoc>('batch_charges'),
  };
}

const opened = new WeakMap<Db, BatchStore>();

export class BatchStore {
  readonly jobs: Collection<JobDoc>;
  readonly slices: Collection<SliceRecord>;
  readonly runs: Collection<RunDoc>;
  readonly controls: Collection<RunControlDoc>;
  readonly results: Collection<ResultRecord>;
  readonly exports: Collection<ExportDoc>;
  readonly inputs: Collection<JobInputDoc>;
  readonly charges: Collection<ChargeDoc>;

  /** The store of `db`, opened on first use and shared by everything in this process after. */
  static of(db: Db): BatchStore {
    let store = opened.get(db);
    if (!store) {
      store = new BatchStore(db);
      opened.set(db, store);
    }
    return store;
  }

  private constructor(
    /** The database itself, for what the kernel keeps beside Batch's collections (blobs, slots, claims, starts). */
    readonly db: Db,
  ) {
    const collections = batchCollections(db);
    this.jobs = collections.jobs;
    this.slices = collections.slices;
    this.runs = collections.runs;
    this.controls = collections.controls;
    this.results = collections.results;
    this.exports = collections.exports;
    this.inputs = collections.inputs;
    this.charges = collections.charges;
  }

  /** Slices by `_id`, decoded (absent ones are left out). */
  async readSlices(sliceIds: string[]): Promise<SliceDoc[]> {
    return (await this.slices.find({ _id: { $in: sliceIds } }).toArray()).map(fromSliceRecord);
  }

  async readSlice(sliceId: string): Promise<SliceDoc | undefined> {
    const record = await this.slices.findOne({ _id: sliceId });
    return record ? fromSliceRecord(record) : undefined;
  }

  /** Result documents by `_id`, decoded (absent ones are left out). */
  async readResultDocs(resultIds: string[]): Promise<ResultDoc[]> {
    return (await this.results.find({ _id: { $in: resultIds } }).toArray()).map(fromResultRecord);
  }

  async readResultDoc(resultId: string): Promise<ResultDoc | undefined> {
    const record = await this.results.findOne({ _id: resultId });
    return record ? fromResultRecord(record) : undefined;
  }

  /** Inserts a slice's results (or a paused part's); a duplicate key throws: another attempt stored them first. */
  async insertResultDoc(doc: ResultDoc): Promise<void> {
    await this.results.insertOne(toResultRecord(doc));
  }

  /** Inserts slices, up to 100 at a time; a slice left under the same id (by a call that died) is replaced. */
  async writeSlices(docs: SliceDoc[]): Promise<void> {
    for (let from = 0; from < docs.length; from += 100) {
      const part = docs.slice(from, from + 100);
      try {
        await this.slices.insertMany(part.map(toSliceRecord), { ordered: false });
      } catch (error) {
        if (!isDuplicateKey(error) && !(error as { writeErrors?: unknown }).writeErrors) throw error;
        for (const doc of part) await this.slices.replaceOne({ _id: doc._id }, toSliceRecord(doc), { upsert: true });
      }
    }
  }
}

export const BATCH_INDEXES: IndexRegistration = {
  batch_jobs: [{ key: { account_id: 1, _id: -1 }, name: 'account_newest' }],
  batch_job_inputs: [{ key: { account_id: 1 }, name: 'account' }],
  batch_exports: [{ key: { account_id: 1, status: 1 }, name: 'account_status' }],
  batch_runs: [{ key: { job_id: 1, run_sequence: -1 }, name: 'job_newest' }],
};
