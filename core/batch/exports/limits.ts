/**
 * The plan's limit on exports being written at once (`concurrent_exports`): a refusal is 429
 * `quota_exceeded` naming the limit (core/accounts/limits.ts).
 */
import type { Principal } from '../../accounts';
import { checkLimit } from '../../accounts/limits';
import type { BatchStore } from '../store';

/** An export not written within this long is failed or stuck: it no longer counts as being written. */
const EXPORT_STALE_MS = 3 * 3_600_000;

/** Refuses an export while the account has its plan's `concurrent_exports` being written. */
export async function checkConcurrentExports(store: BatchStore, principal: Principal): Promise<void> {
  const held = await store.exports.countDocuments({ account_id: principal.accountId, status: { $in: ['pending', 'running'] }, created_at: { $gt: new Date(Date.now() - EXPORT_STALE_MS) } });
  checkLimit(principal, 'concurrentExports', held, 1, 30);
}

/** Of the exports `ids`, which are still being written (a finished, failed or stuck one no longer counts). */
export async function exportStates(store: BatchStore, ids: string[]): Promise<Map<string, 'live' | 'ended'>> {
  const docs = await store.exports.find({ _id: { $in: ids } }, { projection: { status: 1, created_at: 1 } }).toArray();
  const stale = Date.now() - EXPORT_STALE_MS;
  return new Map(docs.map((doc) => [doc._id, (doc.status === 'pending' || doc.status === 'running') && doc.created_at.getTime() > stale ? 'live' : 'ended']));
}
