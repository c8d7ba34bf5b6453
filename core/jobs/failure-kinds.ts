/**
 * The failure table of the activities: the ways an activity fails that no Fetch answers (what it was
 * asked to work on is gone, a webhook cannot be signed or was not taken, work cut short). Rows as the
 * engine's (engine/failures.ts), so `activityFailure` reads `retry` the same way for both tables.
 */
import type { FailureRow } from '../../engine';

const row = (blame: FailureRow['blame'], retry: boolean, final = true): FailureRow => ({ code: 'internal_error', blame, escalate: false, retry, final });

export const ACTIVITY_FAILURES = {
  run_missing: row('service', false),
  /** A Batch run's slice document is gone (the job was deleted under its run): trying again finds nothing either. */
  slice_missing: row('service', false),
  /** Part of a crawl slice's stored discoveries is not readable yet: tried again within the crawl slice's bounded policy. */
  crawl_part_missing: row('service', true),
  /** Work stopped before its end (cancelled, shutting down): run again, never stored as done. */
  interrupted: row('service', true, false),
  webhook_event_missing: row('service', false),
  signing_unavailable: row('service', false),
  signing_key_missing: row('caller', false),
  webhook_attempt_failed: row('target', true),
} as const satisfies Record<string, FailureRow>;

export type ActivityFailureKind = keyof typeof ACTIVITY_FAILURES;
