/** Webhook events with their attempts as the deliveries listings show them: a Batch job's and a crawl's alike. */
import type { EventWithAttempts } from '../../core/webhooks/events';

export function presentDeliveries(found: EventWithAttempts[]) {
  return {
    deliveries: found.map((event) => ({
      event_id: event.event_id,
      run_id: event.run_id,
      event_type: (JSON.parse(event.body) as { event_type: string }).event_type,
      state: event.state,
      url: event.url,
      attempts: event.attempt_records.map((attempt) => ({
        attempt: attempt.attempt,
        at: attempt.at.toISOString(),
        elapsed_ms: attempt.elapsed_ms,
        ...(attempt.status_code !== undefined ? { status_code: attempt.status_code } : {}),
        ...(attempt.error !== undefined ? { error: attempt.error } : {}),
      })),
    })),
  };
}
