/**
 * A crawl's webhook events (our extension): `crawl.started`, `crawl.completed`, `crawl.stopped`,
 * `crawl.failed` and `crawl.page.failed`, stored beside Batch's in `webhook_events` and delivered by the
 * same workflow (`webhook-<event_id>`), signed and retried alike. Each moment has one key computed from
 * the crawl (`crawl:<id>:started`, `crawl:<id>:end`, `crawl:<id>:page:<url hash>`) and an event id
 * derived from that key, so a retried slice or publish, or another worker taking it over, finds the
 * event already written and starts the same delivery: one event per moment, one per failed page.
 */
import { createHash } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { derivedUlid } from '../../base/ids';
import type { Coverage, CrawlErrorCode, CrawlStatus, CrawlWebhook, CrawlWebhookEvent, StopReason } from '../crawls/types';
import { insertEventOnce, WEBHOOK_EVENTS, WEBHOOK_SCHEMA, type EventDocument } from './events';

export type CrawlEventType = `crawl.${CrawlWebhookEvent}`;

/** A page that failed, as `crawl.page.failed` tells it. */
export interface FailedPage {
  url: string;
  /** The site's answer, when it answered (4xx, 5xx). */
  status_code?: number;
  /** `http_4xx:<code>`, `http_5xx:<code>`, or the kind of failure when nothing usable came back (`timeout`, `dns_failed`, …). */
  error: string;
  detail?: string;
}

export interface CrawlEventBody {
  schema: typeof WEBHOOK_SCHEMA;
  event_id: string;
  event_type: CrawlEventType;
  occurred_at: string;
  crawl_id: string;
  status: CrawlStatus;
  url: string;
  coverage: Coverage;
  created_at: string;
  finished_at?: string;
  stop_reason?: StopReason;
  error?: { code: CrawlErrorCode; detail: string };
  page?: FailedPage;
}

/** What a crawl event says, before it has an id and a time. */
export interface CrawlMoment {
  crawlId: string;
  accountId: string;
  /** The crawl's start URL and creation time (ISO). */
  url: string;
  createdAt: string;
  webhook: CrawlWebhook;
  event: CrawlWebhookEvent;
  status: CrawlStatus;
  coverage: Coverage;
  finishedAt?: string;
  stopReason?: StopReason;
  error?: { code: CrawlErrorCode; detail: string };
  page?: FailedPage;
}

const urlHash = (url: string): string => createHash('sha256').update(url).digest('base64url').slice(0, 22);

/** The event's key: the same for the same moment of the same crawl (one end, one event per page). */
export function crawlEventKey(crawlId: string, event: CrawlWebhookEvent, pageUrl?: string): string {
  if (event === 'started') return `crawl:${crawlId}:started`;
  if (event === 'page.failed') return `crawl:${crawlId}:page:${urlHash(pageUrl ?? '')}`;
  return `crawl:${crawlId}:end`;
}

/** The event id: ULID-shaped like Batch's, its time part the crawl's creation, the rest from the key. */
export const crawlEventId = (createdAt: string, key: string): string => derivedUlid(Date.parse(createdAt) || 0, key);

/** How a failed page is told: the site's status when it answered, else the kind of failure. */
export function failedPage(url: string, outcome: { httpStatus?: number; errorKind?: string; detail?: string }): FailedPage {
  const detail = outcome.detail ? { detail: outcome.detail } : {};
  const status = outcome.httpStatus;
  if (status !== undefined && status >= 400) return { url, status_code: status, error: `http_${status >= 500 ? '5xx' : '4xx'}:${status}`, ...detail };
  return { url, error: outcome.errorKind ?? 'fetch_failed', ...detail };
}

/** Whether the crawl's webhook asked to be told of `event`. */
export const wants = (webhook: CrawlWebhook | undefined, event: CrawlWebhookEvent): webhook is CrawlWebhook => webhook?.events.includes(event) === true;

/** The end event a crawl's end status makes. */
export const endEvent = (status: Exclude<CrawlStatus, 'running'>): CrawlWebhookEvent => status;

export function crawlEventBody(moment: CrawlMoment, eventId: string, occurredAt: Date): CrawlEventBody {
  return {
    schema: WEBHOOK_SCHEMA,
    event_id: eventId,
    event_type: `crawl.${moment.event}`,
    occurred_at: occurredAt.toISOString(),
    crawl_id: moment.crawlId,
    status: moment.status,
    url: moment.url,
    coverage: { pages_fetched: moment.coverage.pages_fetched, pages_failed: moment.coverage.pages_failed, items_found: moment.coverage.items_found },
    created_at: moment.createdAt,
    ...(moment.finishedAt ? { finished_at: moment.finishedAt } : {}),
    ...(moment.stopReason ? { stop_reason: moment.stopReason } : {}),
    ...(moment.error ? { error: moment.error } : {}),
    ...(moment.page ? { page: moment.page } : {}),
  };
}

/** Writes a crawl's event once: a repeated call (a retried step) returns the event already written. */
export async function recordCrawlEvent(db: Db, moment: CrawlMoment, now: Date = new Date()): Promise<EventDocument> {
  const events: Collection<EventDocument> = db.collection<EventDocument>(WEBHOOK_EVENTS);
  const key = crawlEventKey(moment.crawlId, moment.event, moment.page?.url);
  const eventId = crawlEventId(moment.createdAt, key);
  return insertEventOnce(events, {
    _id: key,
    event_id: eventId,
    account_id: moment.accountId,
    job_id: moment.crawlId,
    run_id: moment.crawlId,
    crawl_id: moment.crawlId,
    url: moment.webhook.url,
    signature: moment.webhook.signature,
    body: JSON.stringify(crawlEventBody(moment, eventId, now)),
    created_at: now,
    state: 'pending',
    attempts: 0,
  });
}
