/**
 * Change tracking: every account's per-URL history of a page's versions, what changed between them,
 * and any past version read again. See README.md for the store and the flows.
 */
import type { Db } from 'mongodb';
import type { HtmlOutputs } from '../../engine';
import { CrawlChanges } from './crawls';
import { ChangeHistory } from './history';
import { historyCommands } from './listing';
import { ChangeRecorder } from './record';

export { CHANGE_INDEXES } from './store';
export { changeTrackingJson, fetchWithHistory, recordFetched, taskChanges, type HistoryFetchResult } from './fetch';
export { historyLimits } from './history';
export type { HistoryCommands, HistoryQuery } from './listing';
export type { AsOf, HistoryLimits, HistoryPage, VersionEntry } from './history';
export type { Observation } from './content';
export type { FieldSource, PendingRecord, Recorded, RecordOptions, VersionMark } from './record';
export type { TrackKey } from './keys';
export { ChangeHistory, ChangeRecorder, CrawlChanges };

/** The change tracking of a process, built once by its composition root. */
export function createChangeTracking(db: Db, outputs: HtmlOutputs) {
  const history = new ChangeHistory(db);
  return {
    recorder: new ChangeRecorder(db, outputs),
    history,
    crawls: new CrawlChanges(db, outputs),
    /** `/v1/history`. */
    listing: historyCommands(history),
  };
}

export type ChangeTracking = ReturnType<typeof createChangeTracking>;
