/**
 * Webhook events and their delivery records. An event is written once, with the exact bytes every
 * attempt sends, under an `_id` computed from the job and run sequence (`<job>:<sequence>`), so the
 * run's end can be retried without making a second event and a job's deliveries are read by `$in` of
 * computed ids. Attempts are insert-only records `<event_id>:<attempt>`; the event document has one
 * writer at a time (the delivery workflow's current activity), which keeps it exact on FerretDB too.
 */
import type { Collection, Db } from 'mongodb';
import type { IndexRegistration } from '../../base/db';
import { claimByInsert } from '../jobs/end';
import { newUlid } from '../../base/ids';

export const WEBHOOK_EVENTS = 'webhook_events';
export const WEBHOOK_ATTEMPTS = 'webhook_attempts';
export const WEBHOOK_SCHEMA = 'service.webhook/v1';

/** A crawl's events are read by crawl, newest first (GET /v1/crawls/{id}/webhook/deliveries). */
export const WEBHOOK_INDEXES: IndexRegistration = {
  [WEBHOOK_EVENTS]: [{ key: { crawl_id: 1, created_at: -1 }, name: 'crawl_newest' }],
};

export type EventType = 'run.completed' | 'run.failed' | 'webhook.test';

export interface RunStats {
  total: number;
  completed: number;
  successful: number;
  failed: number;
  failure_reasons?: Record<string, number>;
  spend: { credits: number; cost: number };
}

export interface EventBody {
  schema: typeof WEBHOOK_SCHEMA;
  event_id: string;
  event_type: EventType;
  occurred_at: string;
  job_id: string;
  run_id: string;
  run_sequence: number;
  stats: RunStats;
  failure_reason?: string;
  failure_detail?: string;
}

export interface EventDocument {
  /** `<job_id>:<run_sequence>`: one end event per run. */
  _id: string;
  event_id: string;
  account_id: string;
  job_id: string;
  run_id: string;
  /** A crawl's event (crawl-events.ts): `job_id` and `run_id` are then the crawl id, and no Batch run keeps its outcome. */
  crawl_id?: string;
  url: string;
  signature: boolean;
  /** The JSON sent, byte for byte, on every attempt. */
  body: string;
  created_at: Date;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  last_attempt_at?: Date;
  last_status_code?: number;
  last_error?: string;
}

export interface AttemptDocument {
  /** `<event_id>:<attempt>` */
  _id: string;
  event_id: string;
  attempt: number;
  at: Date;
  status_code?: number;
  elapsed_ms: number;
  error?: string;
}

export interface RunEnd {
  accountId: string;
  jobId: string;
  runId: string;
  runSequence: number;
  eventType: 'run.completed' | 'run.failed';
  stats: RunStats;
  failure?: { reason: string; detail: string };
  webhook: { url: string; signature: boolean };
}

export const eventKey = (jobId: string, runSequence: number): string => `${jobId}:${runSequence}`;
export const attemptId = (eventId: string, attempt: number): string => `${eventId}:${attempt}`;

export function eventBody(input: Omit<EventBody, 'schema' | 'event_id' | 'occurred_at'>, eventId: string, occurredAt: Date): EventBody {
  return {
    schema: WEBHOOK_SCHEMA,
    event_id: eventId,
    event_type: input.event_type,
    occurred_at: occurredAt.toISOString(),
    job_id: input.job_id,
    run_id: input.run_id,
    run_sequence: input.run_sequence,
    stats: input.stats,
    ...(input.failure_reason ? { failure_reason: input.failure_reason, failure_detail: input.failure_detail ?? '' } : {}),
  };
}

export interface WebhookEvents {
  /** Writes the run's end event once; a repeated call returns the event already written. */
  recordRunEnd(end: RunEnd, now?: Date): Promise<EventDocument>;
  get(key: string): Promise<EventDocument | null>;
  recordAttempt(event: EventDocument, attempt: Omit<AttemptDocument, '_id' | 'event_id'>): Promise<void>;
  markFailed(key: string): Promise<void>;
  /** Events of a job's runs `sequences`, newest first, each with its attempts. */
  forRuns(jobId: string, sequences: number[]): Promise<EventWithAttempts[]>;
  /** A crawl's newest `limit` events (crawl-events.ts), newest first, each with its attempts. */
  forCrawl(crawlId: string, limit: number): Promise<EventWithAttempts[]>;
}

export type EventWithAttempts = EventDocument & { attempt_records: AttemptDocument[] };

/**
 * Writes an event once under its computed `_id`: a repeated call (a retried step, another worker
 * taking it over) gets the event already written, so it is delivered with the first call's bytes.
 */
export async function insertEventOnce(events: Collection<EventDocument>, doc: EventDocument): Promise<EventDocument> {
  return (await claimByInsert(events, doc)).record;
}

export function createWebhookEvents(db: Db): WebhookEvents {
  const events: Collection<EventDocument> = db.collection<EventDocument>(WEBHOOK_EVENTS);
  const attempts: Collection<AttemptDocument> = db.collection<AttemptDocument>(WEBHOOK_ATTEMPTS);

  /** Each event with its attempts, in the order given. */
  const withAttempts = async (found: EventDocument[]): Promise<EventWithAttempts[]> => {
    const ids = found.flatMap((event) => Array.from({ length: event.attempts }, (_, index) => attemptId(event.event_id, index + 1)));
    const records = ids.length > 0 ? await attempts.find({ _id: { $in: ids } }).toArray() : [];
    return found.map((event) => ({
      ...event,
      attempt_records: records.filter((record) => record.event_id === event.event_id).sort((a, b) => a.attempt - b.attempt),
    }));
  };

  return {
    async recordRunEnd(end, now = new Date()) {
      const key = eventKey(end.jobId, end.runSequence);
      const eventId = newUlid(now.getTime());
      const body = eventBody(
        {
          event_type: end.eventType,
          job_id: end.jobId,
          run_id: end.runId,
          run_sequence: end.runSequence,
          stats: end.stats,
          ...(end.failure ? { failure_reason: end.failure.reason, failure_detail: end.failure.detail } : {}),
        },
        eventId,
        now,
      );
      return insertEventOnce(events, {
        _id: key,
        event_id: eventId,
        account_id: end.accountId,
        job_id: end.jobId,
        run_id: end.runId,
        url: end.webhook.url,
        signature: end.webhook.signature,
        body: JSON.stringify(body),
        created_at: now,
        state: 'pending',
        attempts: 0,
      });
    },

    get: (key) => events.findOne({ _id: key }),

    async recordAttempt(event, attempt) {
      const record: AttemptDocument = { _id: attemptId(event.event_id, attempt.attempt), event_id: event.event_id, ...attempt };
      // A retried activity attempt keeps its first record: attempt numbers come from Temporal.
      await attempts.updateOne({ _id: record._id }, { $set: record }, { upsert: true });
      await events.updateOne(
        { _id: event._id },
        {
          $set: {
            attempts: Math.max(event.attempts, attempt.attempt),
            last_attempt_at: attempt.at,
            ...(attempt.status_code !== undefined ? { last_status_code: attempt.status_code } : {}),
            last_error: attempt.error ?? '',
            ...(attempt.error === undefined ? { state: 'delivered' as const } : {}),
          },
        },
      );
    },

    async markFailed(key) {
      await events.updateOne({ _id: key, state: 'pending' }, { $set: { state: 'failed' } });
    },

    async forRuns(jobId, sequences) {
      const found = await events.find({ _id: { $in: sequences.map((sequence) => eventKey(jobId, sequence)) } }).toArray();
      found.sort((a, b) => b.created_at.getTime() - a.created_at.getTime());
      return withAttempts(found);
    },

    async forCrawl(crawlId, limit) {
      return withAttempts(await events.find({ crawl_id: crawlId }).sort({ created_at: -1 }).limit(limit).toArray());
    },
  };
}
