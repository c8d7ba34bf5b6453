/**
 * Active jobs per account, shared by Crawl and Batch: a running job holds one of the account's
 * `limit` numbered slots (core/accounts/held-slots.ts), a document whose `slot` value
 * (`<account>:<0..limit-1>`) is unique, so taking the last slot is one insert only one start can win,
 * whichever API process or worker makes it (FerretDB has no atomic counters). The job's end deletes
 * it. A slot whose job ended without releasing it (a crash) is reclaimed when the account is full:
 * each kind of job says how to tell that one of its jobs has ended.
 */
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey, type IndexRegistration } from '../../base/db';
import { takeSlot, type Holding, type SlotRecords } from '../accounts/held-slots';

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

const slotOf = (accountId: string, n: number): string => `${accountId}:${n}`;

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
    // The account's records as last read, to hand the checkers whole documents.
    let docs: ActiveJobDoc[] = [];
    const records: SlotRecords = {
      read: async () => {
        docs = await this.jobs.find({ account_id: accountId }).toArray();
        return docs.map((doc): Holding => ({ n: slotNumber(doc.slot), holder: doc._id, at: doc.created_at.getTime() }));
      },
      insert: async (n) => {
        try {
          await this.jobs.insertOne({ _id: job.id, slot: slotOf(accountId, n), account_id: accountId, kind: job.kind, created_at: new Date(this.now()) });
          return true;
        } catch (error) {
          if (isDuplicateKey(error)) return false; // another start took this slot at the same moment: look again
          throw error;
        }
      },
      remove: async (n, holder) => {
        await this.jobs.deleteOne({ _id: holder, slot: slotOf(accountId, n) });
      },
    };
    const taken = await takeSlot(records, limit, job.id, async () => {
      const gone = new Set<string>();
      for (const doc of docs) {
        const checker = this.checkers[doc.kind];
        if (checker && !(await checker(doc))) gone.add(doc._id);
      }
      return gone;
    });
    return taken.ok ? { ok: true } : { ok: false, inUse: taken.inUse };
  }

  async release(jobId: string): Promise<void> {
    await this.jobs.deleteOne({ _id: jobId });
  }

  /** Jobs of the account counted as running now. */
  async inUse(accountId: string): Promise<number> {
    return this.jobs.countDocuments({ account_id: accountId });
  }
}

/** The number of a slot `<account>:<n>` (the account id may itself hold colons). */
function slotNumber(slot: string): number {
  return Number(slot.slice(slot.lastIndexOf(':') + 1));
}
