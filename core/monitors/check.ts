/**
 * A check's start and end, around its pages (pages.ts):
 *
 *   begin ─ monitor gone ─> nothing
 *         ─ check id (derived from the fire: a retried begin finds its own)
 *         ─ the monitor's lock (`monitor_locks`, a unique insert) held by another running check
 *             ─> this check recorded as `skipped` (overlap), never stacked
 *         ─> the check recorded `running` (`baseline` while the monitor has none)
 *   end   ─ the terminal state claimed once (core/jobs/end.ts) with counts read from its pages
 *         ─ the lock given back
 *         ─ follow: one event per page that changed, appeared or went (not at the baseline, not for a
 *           deleted monitor), then monitor.check.completed or .failed (events.ts), each written once
 */
import { insertIgnoringDuplicates, isDuplicateKey } from '../../base/db';
import { derivedTimedId } from '../../base/ids';
import { claimByUpdate, endJob, type JobEndSurface } from '../jobs/end';
import { monitorEvents, type EventRef } from './events';
import { readList, writeList } from './lists';
import { storedCheck } from './stored';
import { emptyCounts, type CheckCounts, type CheckDoc, type MonitorDoc, type MonitorStore } from './store';

export interface BeginInput {
  monitorId: string;
  trigger: 'scheduled' | 'manual';
  /** A check asked for now carries its id; a scheduled one derives it from its fire. */
  checkId?: string;
  fireId: string;
  /** The fire's start, in ms (the workflow's, the same on every replay). */
  startedAt: number;
}

export type Begun = { kind: 'run'; checkId: string; baseline: boolean } | { kind: 'ended'; checkId: string } | { kind: 'skipped'; checkId?: string };

export interface CheckEnd {
  status: 'completed' | 'failed';
  reason?: string;
  detail?: string;
}

/** The time a Schedule's fire was due: Temporal appends it to the action's workflow id (`…-2026-11-27T17:30:00Z`). */
export function nominalTime(fireId: string): number | undefined {
  const match = /-(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z)$/.exec(fireId);
  const at = match ? Date.parse(match[1] as string) : Number.NaN;
  return Number.isNaN(at) ? undefined : at;
}

/** A lock older than this belongs to a check whose workflow was ended by hand: it is taken over. */
const STALE_LOCK_MS = 6 * 3_600_000;

export function checkLifecycle(store: MonitorStore) {
  const events = monitorEvents(store.db);

  const counts = async (check: CheckDoc): Promise<CheckCounts> => {
    const { parts, pages } = await storedCheck(store, check._id);
    const total = emptyCounts();
    for (const page of pages) {
      total.credits += page.credits;
      if (page.change !== 'removed') total.pages_checked += 1;
      total[page.change] += 1;
    }
    for (const part of parts) {
      total.pages_checked += part.same_urls.length;
      total.same += part.same_urls.length;
      total.credits += part.same_credits;
    }
    return total;
  };

  /** Takes the monitor's lock for `checkId`; answers false when another running check holds it. */
  const lock = async (monitorId: string, checkId: string): Promise<boolean> => {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await store.locks.insertOne({ _id: monitorId, check_id: checkId, at: new Date() });
        return true;
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
      }
      const held = await store.locks.findOne({ _id: monitorId });
      if (!held) continue;
      if (held.check_id === checkId) return true;
      const other = await store.checks.findOne({ _id: held.check_id }, { projection: { status: 1 } });
      const stale = Date.now() - held.at.getTime() > STALE_LOCK_MS;
      if (other?.status === 'running' && !stale) return false;
      await store.locks.deleteOne({ _id: monitorId, check_id: held.check_id });
    }
    return false;
  };

  const surface: JobEndSurface<CheckEnd, CheckDoc, EventRef[]> = {
    async claim(checkId, end, at) {
      const check = await store.checks.findOne({ _id: checkId });
      if (!check) return null;
      const totals = await counts(check);
      return claimByUpdate(
        store.checks,
        checkId,
        { status: 'running' },
        { $set: { ...totals, status: end.status, ended_at: at, ...(end.reason ? { reason: end.reason, detail: end.detail ?? '' } : {}) } },
        (record) => record.ended_at?.getTime() === at.getTime(),
      );
    },
    async release(checkId, record) {
      await store.locks.deleteOne({ _id: record.monitor_id, check_id: checkId });
      const monitor = await store.monitors.findOne({ _id: record.monitor_id });
      if (!monitor || record.status !== 'completed') return;
      const { parts, pages } = await storedCheck(store, checkId);
      const found = pages.filter((page) => page.change === 'new' || page.change === 'same' || page.change === 'changed' || page.change === 'failed');
      // A page of the monitor failing this time (not gone: that is `removed`) stays one of its pages.
      const last = await readList(store, monitor._id, 'last');
      const listed = new Set(last);
      const kept = found.filter((page) => page.change !== 'failed' || listed.has(page.url));
      const urls = [...kept.map((page) => page.url), ...parts.flatMap((part) => part.same_urls)].sort();
      // Most checks find the pages the last one found: the list is not written again then.
      const same = urls.length === last.length && urls.every((url, index) => url === last[index]);
      if (!same) await writeList(store, monitor._id, 'last', urls);
      if (record.baseline && !monitor.baseline_at) await store.monitors.updateOne({ _id: monitor._id }, { $set: { baseline_at: record.ended_at ?? new Date() } });
    },
    async follow(record) {
      const monitor = await store.monitors.findOne({ _id: record.monitor_id });
      if (!monitor?.webhook || monitor.status === 'deleted') return [];
      return events.forCheck(store, monitor, record);
    },
  };

  return {
    async begin(input: BeginInput): Promise<Begun> {
      const monitor = await store.monitors.findOne({ _id: input.monitorId });
      if (!monitor || monitor.status === 'deleted') return { kind: 'skipped' };
      const checkId = input.checkId ?? derivedTimedId('chk', input.startedAt, input.fireId);
      const earlier = await store.checks.findOne({ _id: checkId });
      if (earlier && earlier.status === 'skipped') return { kind: 'skipped', checkId };
      if (earlier && earlier.status !== 'running') return { kind: 'ended', checkId };
      const base = (status: CheckDoc['status']): CheckDoc => ({
        _id: checkId,
        monitor_id: monitor._id,
        account_id: monitor.account_id,
        trigger: input.trigger,
        status,
        baseline: monitor.baseline_at === null,
        started_at: new Date(),
        ended_at: status === 'skipped' ? new Date() : null,
        scheduled_at: input.trigger === 'scheduled' ? new Date(nominalTime(input.fireId) ?? input.startedAt) : null,
        ...emptyCounts(),
      });
      if (!(await lock(monitor._id, checkId))) {
        await insertIgnoringDuplicates(store.checks, [{ ...base('skipped'), reason: 'overlap', detail: 'Another check of this monitor was still running.' }]);
        return { kind: 'skipped', checkId };
      }
      const check = earlier ?? base('running');
      if (!earlier) {
        await insertIgnoringDuplicates(store.checks, [check]);
        await store.monitors.updateOne({ _id: monitor._id }, { $set: { last_check_id: checkId, check_count: monitor.check_count + 1 } });
      }
      return { kind: 'run', checkId, baseline: check.baseline };
    },

    /** The check's end, once; its events (written once) to deliver, again on every call. */
    async end(checkId: string, end: CheckEnd): Promise<{ status: string; events: EventRef[] }> {
      const ended = await endJob(surface, checkId, end);
      return { status: ended.record.status, events: ended.follow ?? [] };
    },
  };
}

export type CheckLifecycle = ReturnType<typeof checkLifecycle>;
export type { MonitorDoc };
