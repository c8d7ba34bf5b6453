/** What operators read of the host gate: the hosts every job leaves alone for now. */
import type { Db } from 'mongodb';
import { politenessCollections } from './store';

export interface PausedHost {
  host: string;
  until: Date;
  /** 429/503 answers in a row. */
  level: number;
  status?: number;
}

/** Hosts paused now (for operators): host, until when, how many answers in a row, the status. */
export async function hostsInBackoff(db: Db, now: Date = new Date()): Promise<PausedHost[]> {
  const docs = await politenessCollections(db).state.find({ kind: 'backoff', until: { $gt: now } }).sort({ until: -1 }).limit(1_000).toArray();
  return docs.map((doc) => ({ host: doc.host, until: doc.until, level: doc.level ?? 1, ...(doc.status !== undefined ? { status: doc.status } : {}) }));
}
