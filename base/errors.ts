/**
 * Every error a caller can see, as one catalogue: stable code, HTTP status, title text and what it
 * means. `problem(code, detail)` builds the error; the API's error middleware renders it as an
 * `application/problem+json` document, and `/docs/api-error-codes` renders the catalogue itself.
 */
interface CatalogueEntry {
  status: number;
  title: string;
  meaning: string;
}

const catalogue = {
  // Fetch
  REQS001: { status: 400, title: 'Requests to this domain are forbidden', meaning: 'The target is not a public http/https address.' },
  REQS002: { status: 400, title: 'Target needs a browser or premium proxies', meaning: 'Retry with js_render and/or premium_proxy, or mode=auto.' },
  REQS004: { status: 400, title: 'Invalid parameter value', meaning: 'A parameter is missing, unknown or has a value it cannot take; the detail names it.' },
  REQS007: { status: 403, title: 'Extract not prepared for this domain', meaning: 'Prepare the domain through /v1/extract/prepared-domains first.' },
  REQS008: { status: 403, title: 'Crawl is not enabled for the account', meaning: 'The account plan does not include Crawl.' },
  REQS009: { status: 403, title: 'Disallowed by robots.txt', meaning: 'The request asked to respect robots.txt (respect_robots=true) and the site disallows the URL, or its robots.txt cannot be read for now.' },
  RESP001: {
    status: 422,
    title: 'Could not get content',
    meaning: 'The target could not be returned under this configuration; try js_render=true and premium_proxy=true, or mode=auto.',
  },
  RESP002: { status: 404, title: 'Target answered 404', meaning: 'The page does not exist on the target.' },
  RESP004: { status: 400, title: 'Invalid CSS extractor', meaning: 'css_extractor must be a JSON object of output keys to CSS selectors.' },
  RESP005: { status: 413, title: 'Response too large', meaning: 'The target answered with more data than the service accepts.' },
  RESP008: { status: 400, title: 'wait_for selector not found', meaning: 'The page loaded but no element matched the wait_for selector in time; the detail names it. Not retried or escalated.' },
  RESP007: { status: 422, title: 'Domain could not be resolved', meaning: 'The target host name has no address.' },
  AUTH001: { status: 401, title: 'API key missing', meaning: 'Send the API key where the surface expects it.' },
  AUTH002: { status: 401, title: 'API key malformed', meaning: 'An API key is 40 hexadecimal characters.' },
  AUTH003: { status: 401, title: 'API key not found', meaning: 'The key does not exist or was revoked.' },
  AUTH004: { status: 402, title: 'Usage exceeded', meaning: 'The account used all credits for the period.' },
  AUTH008: { status: 429, title: 'Concurrency limit reached', meaning: 'Every concurrency slot of the plan is in use; retry when a request finishes.' },
  AUTH010: { status: 402, title: 'Feature not included in the plan', meaning: 'The plan lacks this capability.' },
  AUTH014: { status: 402, title: 'API key credit cap reached', meaning: 'This key reached its own credit cap; the account’s other keys still work.' },
  CTX0002: { status: 504, title: 'Request timed out', meaning: 'The request exceeded the maximum time.' },
  // Documents (Fetch, crawls, Batch, MCP and POST /v1/documents alike); nothing is charged for any of them
  document_unsupported: { status: 415, title: 'Document format not supported', meaning: 'The file is not a format the service converts (PDF, DOCX, PPTX, XLSX, ODT, ODS, ODP, CSV), or a legacy binary Office file.' },
  document_unreadable: { status: 422, title: 'Document could not be read', meaning: 'The document is truncated or corrupt, loops on itself, or carries a DTD (external entities).' },
  document_encrypted: { status: 422, title: 'Document is encrypted', meaning: 'The document needs a password to be opened.' },
  document_too_large: { status: 413, title: 'Document too large', meaning: 'The document is over a cap: bytes (DOCUMENT_MAX_BYTES), inflated size (DOCUMENT_MAX_INFLATED_BYTES), pages, cells, text or memory; `limit` names it.' },
  document_too_complex: { status: 422, title: 'Document too complex', meaning: 'The document nests deeper than the service follows, or took longer than DOCUMENT_TIMEOUT_MS to read.' },
  documents_busy: { status: 503, title: 'Document conversion busy', meaning: 'Every document worker is busy and the queue is full; retry after the Retry-After seconds.' },
  // Crawl
  invalid_request: { status: 400, title: 'Invalid request', meaning: 'The body is not valid JSON, or a header or query value is malformed.' },
  unknown_parameter: { status: 400, title: 'Unknown parameter', meaning: 'A body field or query parameter is not accepted; the detail names it.' },
  invalid_cursor: { status: 400, title: 'Invalid cursor', meaning: 'The cursor does not belong to this crawl.' },
  invalid_parameter: { status: 400, title: 'Invalid parameter', meaning: 'A value is missing or out of range; the detail names the field.' },
  crawl_not_found: { status: 404, title: 'Crawl not found', meaning: 'No such crawl on the account.' },
  content_not_found: { status: 404, title: 'Content not found', meaning: 'The page was not fetched yet, its fetch failed, or the crawl has no output_format.' },
  // Change tracking (our extension)
  version_not_found: { status: 404, title: 'Version not found', meaning: 'The account keeps no version of this URL at that time, or by that id (another account’s ids are not found either).' },
  idempotency_request_in_flight: { status: 409, title: 'Request in flight', meaning: 'A request with this Idempotency-Key is still in progress; retry when it ends.' },
  invalid_start_url: { status: 422, title: 'Invalid start URL', meaning: 'The start URL is not a public http/https URL of at most 2,048 characters.' },
  idempotency_key_reused: { status: 422, title: 'Idempotency key reused', meaning: 'The Idempotency-Key was used with a different body.' },
  too_many_crawls: { status: 429, title: 'Too many active jobs', meaning: 'The account already runs its active jobs; retry after 30 seconds.' },
  internal_error: { status: 500, title: 'Internal error', meaning: 'A fault on the service side; retry later.' },
  // Extract prepared domains and Batch
  invalid_argument: { status: 400, title: 'Invalid argument', meaning: 'The body is missing or malformed.' },
  unauthenticated: { status: 401, title: 'Unauthenticated', meaning: 'The API key is missing or invalid.' },
  payment_required: { status: 402, title: 'Payment required', meaning: 'No credits available.' },
  not_found: { status: 404, title: 'Not found', meaning: 'No such resource.' },
  in_progress: { status: 409, title: 'In progress', meaning: 'A preparation for the domain is already running; poll its status.' },
  idempotency_conflict: { status: 409, title: 'Idempotency conflict', meaning: 'Same Idempotency-Key with a different body.' },
  conflict: { status: 409, title: 'Conflict', meaning: 'The job is closed, or a large submission is still being written.' },
  // Batch lifecycle refusals, each under the code the Batch clients branch on (`reason` repeats it).
  job_not_open: { status: 409, title: 'Job not open', meaning: 'The job takes no tasks (a scheduled job’s tasks are a template), or an open job cannot be rerun before it is closed.' },
  last_batch_received: { status: 409, title: 'Last batch received', meaning: 'The job is closed: its last batch was received, so it takes no more tasks.' },
  run_not_terminal: { status: 409, title: 'Run not terminal', meaning: 'The latest run has not ended (a rerun starts after it ends), or a large submission is still being written: retry.' },
  run_not_stoppable: { status: 409, title: 'Run not stoppable', meaning: 'The run has ended or is stopping already.' },
  no_prior_run: { status: 409, title: 'No prior run', meaning: 'The job has no run yet.' },
  no_matching_tasks: { status: 409, title: 'No matching tasks', meaning: 'A partial rerun’s `status` filter matched no task of the previous run.' },
  run_has_descendants: { status: 409, title: 'Run has descendants', meaning: 'A rerun reads this run’s results: delete it first.' },
  idempotency_key_conflict: { status: 409, title: 'Idempotency key conflict', meaning: 'The Idempotency-Key was used with a different body, or the first call with it is still running.' },
  task_not_ready: { status: 409, title: 'Task not ready', meaning: 'The task has no body: it is pending, failed or was not run.' },
  partial_rerun_window_expired: { status: 409, title: 'Partial rerun window expired', meaning: 'A partial rerun more than 10 days after the run it retries started; a full rerun still works.' },
  result_expired: { status: 410, title: 'Result expired', meaning: 'The result is past the job’s retention window.' },
  file_input_not_found: { status: 404, title: 'File input not found', meaning: 'No such file input, or its 24-hour slot expired.' },
  file_input_not_uploaded: { status: 409, title: 'File input not uploaded', meaning: 'The CSV was never uploaded to the slot.' },
  file_input_unsupported_for_job_type: { status: 409, title: 'File input unsupported for job type', meaning: 'A CSV input is for closed regular jobs and scheduled jobs.' },
  out_of_allowance: { status: 429, title: 'Out of allowance', meaning: 'No preparation slots left this month.' },
  quota_exceeded: { status: 429, title: 'Quota exceeded', meaning: 'The account holds all the plan allows of a resource: active jobs, or the limit the document names (mcp_sessions, scheduled_jobs, stored_inputs, stored_input_bytes, concurrent_exports, oauth_clients).' },
  rate_limited: { status: 429, title: 'Rate limited', meaning: 'Too many requests to this route from this network or account, or past the account\'s request budget (`limit` names requests_per_second or requests_in_flight), or after too many keys that are not valid from this network (`limit` auth_failures), or for renders once the account\'s renders ran to the render deadline as often as its plan allows (`limit` deadline_renders); retry after the Retry-After seconds.' },
  webhook_signing_requires_active_key: { status: 400, title: 'Webhook signing requires an active key', meaning: 'Create an HMAC key before asking for signed webhooks.' },
  callback_url_must_be_https: { status: 400, title: 'Callback URL must be https', meaning: 'Webhook URLs must be public https URLs.' },
  callback_url_unresolvable: { status: 400, title: 'Callback URL unresolvable', meaning: 'The webhook host name has no address (it must resolve within a second).' },
  candidate_pending: { status: 409, title: 'Candidate key pending', meaning: 'A rotation already staged a candidate key: finalize it or cancel the rotation.' },
  no_candidate: { status: 409, title: 'No candidate key', meaning: 'No rotation is in progress: rotate first.' },
  internal: { status: 503, title: 'Temporary failure', meaning: 'Retry with backoff.' },
  // Service-wide
  method_not_allowed: { status: 405, title: 'Method not allowed', meaning: 'The path exists but not for this method.' },
  request_timeout: { status: 408, title: 'Request timeout', meaning: 'The request (headers or body) did not arrive in time.' },
  payload_too_large: { status: 413, title: 'Payload too large', meaning: 'The request body exceeds the accepted size.' },
  expectation_failed: { status: 417, title: 'Expectation failed', meaning: 'Only the Expect value 100-continue is supported.' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type', meaning: 'The body must be JSON (application/json).' },
  request_header_fields_too_large: { status: 431, title: 'Request headers too large', meaning: 'A header exceeds the accepted size.' },
  not_ready: { status: 503, title: 'Not ready', meaning: 'A dependency of the service is unreachable.' },
  service_unavailable: {
    status: 503,
    title: 'Service unavailable',
    meaning: 'A component this request needs (the database, the workflow service or a worker) is unreachable; a Fetch answered so is not charged. Retry after the Retry-After seconds.',
  },
} satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof catalogue;

export const ERROR_CATALOGUE: Readonly<Record<ErrorCode, CatalogueEntry>> = catalogue;

export interface ProblemOptions {
  /** Extra members of the problem document (for example `reason`, `checks`). */
  members?: Record<string, unknown>;
  headers?: Record<string, string>;
  /** Overrides the catalogue status where a code has two (invalid_parameter is 400 or 422). */
  status?: number;
  cause?: unknown;
}

/** An error meant for the caller. Anything else reaching the error middleware is a 500 without internals. */
export class ApiError extends Error {
  readonly kind = 'api-error';
  readonly status: number;
  readonly title: string;
  readonly members: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    options: ProblemOptions = {},
  ) {
    super(`${code}: ${detail}`, { cause: options.cause });
    this.name = 'ApiError';
    const entry = catalogue[code];
    this.status = options.status ?? entry.status;
    this.title = `${entry.title} (${code})`;
    this.members = options.members ?? {};
    this.headers = options.headers ?? {};
  }
}

export const problem = (code: ErrorCode, detail: string, options?: ProblemOptions): ApiError =>
  new ApiError(code, detail, options);

/** Discriminates without `instanceof`, which breaks across module copies. */
export const isApiError = (error: unknown): error is ApiError =>
  typeof error === 'object' && error !== null && (error as { kind?: unknown }).kind === 'api-error';

/** "1 second", "30 seconds": a wait as a message words it. */
export const secondsText = (seconds: number): string => `${seconds} ${seconds === 1 ? 'second' : 'seconds'}`;
