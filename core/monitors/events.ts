/**
 * A check's webhook events, written beside Batch's (`webhook_events`, the same document and delivery:
 * core/webhooks/delivery.ts signs and sends the stored bytes, at least once, the same event_id on every
 * retry). One event per page that changed, appeared or went, under the key `mon:<check>:<url hash>`,
 * and one for the check's end, `mon:<check>:end`: computed keys, so a repeated end writes nothing new
 * and answers the events written before. A baseline check announces no page.
 */
import type { Db } from 'mongodb';
import { insertIgnoringDuplicates } from '../../base/db';
import { newUlid } from '../../base/ids';
import { WEBHOOK_EVENTS, WEBHOOK_SCHEMA, type EventDocument } from '../webhooks/events';
import { urlHash, type CheckDoc, type MonitorDoc, type MonitorStore, type PageDoc } from './store';
import { byUrl, storedCheck } from './stored';

export type MonitorEventType = 'monitor.page.changed' | 'monitor.page.new' | 'monitor.page.removed' | 'monitor.check.completed' | 'monitor.check.failed';

export interface EventRef {
  key: string;
  eventId: string;
}

const pageKey = (checkId: string, url: string): string => `mon:${checkId}:${urlHash(url)}`;
const endKey = (checkId: string): string => `mon:${checkId}:end`;

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

function pageBody(monitor: MonitorDoc, check: CheckDoc, page: PageDoc, eventId: string, at: Date): Record<string, unknown> {
  return {
    schema: WEBHOOK_SCHEMA,
    event_id: eventId,
    event_type: `monitor.page.${page.change}`,
    occurred_at: at.toISOString(),
    monitor_id: monitor._id,
    monitor_name: monitor.name,
    check_id: check._id,
    url: page.url,
    change_status: page.change,
    diff: page.diff ? { text: page.diff.text, ...(Object.keys(page.diff.fields).length > 0 || monitor.outputs.css_extractor || monitor.outputs.extract ? { fields: page.diff.fields } : {}) } : null,
    fetched_at: iso(page.fetched_at),
    previous_fetched_at: iso(page.previous_fetched_at),
  };
}

function endBody(monitor: MonitorDoc, check: CheckDoc, eventId: string, at: Date): Record<string, unknown> {
  return {
    schema: WEBHOOK_SCHEMA,
    event_id: eventId,
    event_type: check.status === 'completed' ? 'monitor.check.completed' : 'monitor.check.failed',
    occurred_at: at.toISOString(),
    monitor_id: monitor._id,
    monitor_name: monitor.name,
    check_id: check._id,
    baseline: check.baseline,
    counts: { pages_checked: check.pages_checked, new: check.new, changed: check.changed, removed: check.removed, same: check.same, failed: check.failed },
    credits: check.credits,
    started_at: check.started_at.toISOString(),
    ended_at: iso(check.ended_at),
    ...(check.reason ? { failure_reason: check.reason, failure_detail: check.detail ?? '' } : {}),
  };
}

export function monitorEvents(db: Db) {
  const events = db.collection<EventDocument>(WEBHOOK_EVENTS);
  return {
    /** The check's events, each written once (page events first, the check's end last). */
    async forCheck(store: MonitorStore, monitor: MonitorDoc, check: CheckDoc): Promise<EventRef[]> {
      const webhook = monitor.webhook;
      if (!webhook) return [];
      const at = new Date();
      const written = check.baseline ? [] : (await storedCheck(store, check._id)).pages;
      const pages = written.filter((page) => page.change === 'new' || page.change === 'changed' || page.change === 'removed').sort(byUrl);
      const docOf = (key: string, body: (eventId: string) => Record<string, unknown>): EventDocument => {
        const eventId = newUlid(at.getTime());
        return {
          _id: key,
          event_id: eventId,
          account_id: monitor.account_id,
          job_id: monitor._id,
          run_id: check._id,
          url: webhook.url,
          signature: webhook.signature,
          body: JSON.stringify(body(eventId)),
          created_at: at,
          state: 'pending',
          attempts: 0,
        };
      };
      const docs = [
        ...pages.map((page) => docOf(pageKey(check._id, page.url), (id) => pageBody(monitor, check, page, id, at))),
        docOf(endKey(check._id), (id) => endBody(monitor, check, id, at)),
      ];
      for (let start = 0; start < docs.length; start += 500) await insertIgnoringDuplicates(events, docs.slice(start, start + 500));
      // The events that stand (a repeated end wrote none: those of the first are answered).
      const keys = docs.map((doc) => doc._id);
      const stored = new Map<string, string>();
      for (let start = 0; start < keys.length; start += 500) {
        for (const doc of await events.find({ _id: { $in: keys.slice(start, start + 500) } }, { projection: { event_id: 1 } }).toArray()) stored.set(doc._id, doc.event_id);
      }
      return keys.flatMap((key) => (stored.has(key) ? [{ key, eventId: stored.get(key) as string }] : []));
    },
  };
}
