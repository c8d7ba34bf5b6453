/**
 * The monitors' collections and documents:
 *
 * - `monitors` `mon_…`: what a monitor watches, how often, what it compares and where it announces.
 * - `monitor_lists` `<monitor>|urls`, `<monitor>|last`: its URLs and those its last check found (lists.ts).
 * - `monitor_checks` `chk_…`: one per check, its id derived from the fire (a retried fire finds its own).
 * - `monitor_pages` `<check>|<url hash>`: one page of a check, insert-once, with its change and credits;
 *   a check's counts and events are read from them, so a retried step never counts a page twice.
 * - `monitor_parts` `<check>|p<part>`: a part of a check, the pages it found the same together and the
 *   ids of the others; a check is read through them, by `_id` only (stored.ts).
 * - `monitor_locks` `<monitor>`: the running check of a monitor (a unique insert), so two never overlap.
 * - `monitor_charges`: the job kernel's billing markers of the checks' parts (core/jobs/charges.ts).
 */
import { createHash } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import type { IndexRegistration } from '../../base/db';
import type { ChargeDoc } from '../jobs/charges';
import type { CheckCounts, CheckDoc, ListDoc, LockDoc, MonitorDoc, PageDoc, PartDoc } from './types';

export * from './types';
export const MONITOR_INDEXES: IndexRegistration = {
  monitors: [{ key: { account_id: 1, _id: -1 }, name: 'account_newest' }],
  monitor_checks: [{ key: { monitor_id: 1, _id: -1 }, name: 'monitor_newest' }],
};

export const urlHash = (url: string): string => createHash('sha256').update(url).digest('hex').slice(0, 32);
export const pageId = (checkId: string, url: string): string => `${checkId}|${urlHash(url)}`;
/** The change-tracking tag a monitor's pages are recorded under: its history is its own. */
export const monitorTag = (monitorId: string): string => `monitor:${monitorId}`;

export const emptyCounts = (): CheckCounts => ({ pages_checked: 0, new: 0, changed: 0, removed: 0, same: 0, failed: 0, credits: 0 });

export interface MonitorStore {
  db: Db;
  monitors: Collection<MonitorDoc>;
  lists: Collection<ListDoc>;
  checks: Collection<CheckDoc>;
  pages: Collection<PageDoc>;
  parts: Collection<PartDoc>;
  locks: Collection<LockDoc>;
  charges: Collection<ChargeDoc>;
}

export function monitorStore(db: Db): MonitorStore {
  return {
    db,
    monitors: db.collection<MonitorDoc>('monitors'),
    lists: db.collection<ListDoc>('monitor_lists'),
    checks: db.collection<CheckDoc>('monitor_checks'),
    pages: db.collection<PageDoc>('monitor_pages'),
    parts: db.collection<PartDoc>('monitor_parts'),
    locks: db.collection<LockDoc>('monitor_locks'),
    charges: db.collection<ChargeDoc>('monitor_charges'),
  };
}

export const partId = (checkId: string, part: number): string => `${checkId}|p${part}`;
