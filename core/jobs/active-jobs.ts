/**
 * Active jobs per account, shared by Crawl and Batch: a running job holds one of the account's
 * `limit` slots, a document whose `slot` value (`<account>:<0..limit-1>`) is unique, so taking the
 * last slot is one insert only one request can win (FerretDB has no atomic counters). The job's end
 * deletes it. A slot whose job ended without releasing it (a crash) is reclaimed when the account
 * is full: each kind of job says how to tell that one of its jobs has ended.
 */
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey, type IndexRegistration } from '../../base/db';

export type JobKind = 'crawl' | 'batch';

export const ACTIVE_JOB_INDEXES: IndexRegistration = {
  active_jobs: [
    { key: { slot: 1 }, name: 'slot', unique: true },
    { key: { account_id: 1 }, name: 'account_id' },
  ],
};

export interface ActiveJobDoc {
  _id: string;
  slot: string;
  account_id: string;
  kind: JobKind;
  created_at: Date;
}

/** Whether a job still runs; jobs of a kind without a checker always count. */
export type JobChecker = (job: ActiveJobDoc) => Promise<boolean>;

export type SlotGrant = { ok: true } | { ok: false; inUse: number };

export class ActiveJobs {
  private readonly jobs: Collection<ActiveJobDoc>;

  constructor(
    db: Db,
    private readonly checkers: Partial<Record<JobKind, JobChecker>> = {},
    private readonly now: () => number = Date.now,
  ) {
    this.jobs = db.collection<ActiveJobDoc>('active_jobs');
  }

  /** Takes a slot for `job`, or says the account already runs `limit` jobs. Taking it twice is harmless. */
  async acquire(accountId: string, limit: number, job: { id: string; kind: JobKind }): Promise<SlotGrant> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const held = await this.jobs.find({ account_id: accountId }).toArray();
      if (held.some((doc) => doc._id === job.id)) return { ok: true };
      const taken = new Set(held.map((doc) => doc.slot));
      let free: string | undefined;
      for (let n = 0; n < limit && free === undefined; n++) if (!taken.has(`${accountId}:${n}`)) free = `${accountId}:${n}`;
      if (free === undefined) {
        if ((await this.reclaim(held)) > 0) continue;
        return { ok: false, inUse: held.length };
      }
      try {
        await this.jobs.insertOne({ _id: job.id, slot: free, account_id: accountId, kind: job.kind, created_at: new Date(this.now()) });
        return { ok: true };
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        // Another start took this slot at the same moment (or this job already holds one): look again.
      }
    }
    return { ok: false, inUse: limit };
  }

  async release(jobId: string): Promise<void> {
    await this.jobs.deleteOne({ _id: jobId });
  }

  /** Jobs of the account counted as running now. */
  async inUse(accountId: string): Promise<number> {
    return this.jobs.countDocuments({ account_id: accountId });
  }

  private async reclaim(held: ActiveJobDoc[]): Promise<number> {
    let freed = 0;
    for (const doc of held) {
      const checker = this.checkers[doc.kind];
      if (!checker || (await checker(doc))) continue;
      await this.jobs.deleteOne({ _id: doc._id, slot: doc.slot });
      freed++;
    }
    return freed;
  }
}
