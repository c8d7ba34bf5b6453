/**
 * The mode=auto memory's store (engine/escalation/memory.ts) on the database: one document per
 * registrable domain, keyed by the domain, so a single writer per key and no counters to race on.
 */
import type { Collection, Db } from 'mongodb';
import type { DomainRungRecord, DomainRungStore, RungId } from '../../engine';

interface DomainRungDocument {
  _id: string;
  rung: RungId;
  updated_at: Date;
  expires_at: Date;
}

export const DOMAIN_RUNGS_COLLECTION = 'domain_rungs';

export class MongoDomainRungStore implements DomainRungStore {
  private readonly collection: Collection<DomainRungDocument>;

  constructor(db: Db, collection = DOMAIN_RUNGS_COLLECTION) {
    this.collection = db.collection<DomainRungDocument>(collection);
  }

  async get(domain: string): Promise<DomainRungRecord | undefined> {
    const doc = await this.collection.findOne({ _id: domain });
    return doc ? { domain: doc._id, rung: doc.rung, updatedAt: doc.updated_at, expiresAt: doc.expires_at } : undefined;
  }

  async put(record: DomainRungRecord): Promise<void> {
    await this.collection.replaceOne(
      { _id: record.domain },
      { rung: record.rung, updated_at: record.updatedAt, expires_at: record.expiresAt },
      { upsert: true },
    );
  }

  async delete(domain: string): Promise<void> {
    await this.collection.deleteOne({ _id: domain });
  }

  async purgeExpired(now: Date): Promise<number> {
    const result = await this.collection.deleteMany({ expires_at: { $lte: now } });
    return result.deletedCount;
  }
}
