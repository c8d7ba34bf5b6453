/**
 * The failure table of the engine. Every way a fetch, a render or a retrieval can fail is a row keyed by
 * its string `kind` (activities' own kinds have their rows in core/jobs/failure-kinds.ts), saying:
 *
 * - `code`: the error code (base/errors.ts) the API answers with;
 * - `blame`: whose fault it is: `caller` (the request asked for something refused), `target` (the site
 *   did not answer usefully) or `service` (ours: proxies, the browser pool, bugs);
 * - `escalate`: whether another configuration could help (mode=auto climbs the ladder on it);
 * - `retry`: whether the same request tried again later could help (Batch tries a task again on it;
 *   an activity throws it as a retryable or non-retryable Temporal failure);
 * - `final`: whether the failure is the work's outcome. Not so when this service gave the work up
 *   itself (its caller's cancellation, a pool closing at shutdown): whoever runs the work again must.
 *
 * Callers branch on these columns, never on lists of kinds of their own.
 */
import type { ErrorCode } from '../base/errors';
import type { RenderErrorKind } from './browser/types';
import type { EngineErrorKind } from './types';

/** Whose fault a failure is. */
export type Blame = 'caller' | 'target' | 'service';

export interface FailureRow {
  code: ErrorCode;
  blame: Blame;
  escalate: boolean;
  retry: boolean;
  final: boolean;
}

const row = (code: ErrorCode, blame: Blame, escalate: boolean, retry: boolean, final = true): FailureRow => ({ code, blame, escalate, retry, final });

export const FAILURES = {
  // The request itself: nothing but another request helps.
  invalid_request: row('REQS004', 'caller', false, false),
  invalid_parameter: row('REQS004', 'caller', false, false),
  target_forbidden: row('REQS001', 'caller', false, false),
  // The caller's expectation of the page, not a block: another try or configuration would wait again in vain.
  selector_not_found: row('RESP008', 'caller', false, false),
  // Cancelled by whoever asked: trying again is theirs to decide.
  aborted: row('CTX0002', 'caller', false, false, false),
  /** Under mode=auto, the account could not pay for the next configuration. */
  vetoed: row('AUTH004', 'caller', false, false),
  /** The caller's plan refuses its renders for now (they ran to the render deadline too often): later will do. */
  renders_throttled: row('rate_limited', 'caller', false, true),
  /** The caller asked to respect robots.txt, and the origin's disallows the URL (or cannot be read for now). */
  robots_disallowed: row('REQS009', 'caller', false, false),

  // The target.
  dns_failed: row('RESP007', 'target', false, false),
  too_large: row('RESP005', 'target', false, false),
  tls_failed: row('RESP001', 'target', true, false),
  too_many_redirects: row('RESP001', 'target', true, false),
  connect_failed: row('RESP001', 'target', true, true),
  protocol_error: row('RESP001', 'target', true, true),
  navigation_failed: row('RESP001', 'target', true, true),
  // A page can crash the browser on purpose: answered as the target's failure, never as a 5xx.
  browser_crashed: row('RESP001', 'target', true, true),
  // Says nothing of a block (under our own load it is as likely ours): no dearer configuration, but later may work.
  timeout: row('CTX0002', 'target', false, true),
  /** Under mode=auto, every configuration was blocked; blocks often pass. */
  exhausted: row('RESP001', 'target', false, true),
  /** The host asked for a pause (429/503) longer than a synchronous request waits: later will work. */
  host_paused: row('RESP001', 'target', false, true),

  // This service.
  proxy_failed: row('RESP001', 'service', true, true),
  proxy_unavailable: row('RESP001', 'service', true, false),
  /** `premium_proxy=true` where no premium proxy is configured: the deployment's limit, named as the parameter's. */
  premium_unavailable: row('REQS004', 'service', false, false),
  launch_failed: row('internal_error', 'service', true, true),
  pool_closed: row('not_ready', 'service', false, true, false),
  internal: row('internal_error', 'service', true, true),

} as const satisfies Record<string, FailureRow>;

export type FailureKind = keyof typeof FAILURES;

/** The row of a kind; a kind the table does not know is the service's, worth another configuration and a retry. */
export const failureOf = (kind: string): FailureRow => (FAILURES as Record<string, FailureRow>)[kind] ?? FAILURES.internal;

// Every failure kind of the plain transport and of the browser has its row: a compile error otherwise.
type Unlisted = Exclude<EngineErrorKind | RenderErrorKind, FailureKind>;
export const EVERY_KIND_LISTED: [Unlisted] extends [never] ? true : Unlisted = true;
