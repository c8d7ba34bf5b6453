/** `/v1/monitors`' request and response schemas (they also make its part of the OpenAPI document). */
import { MONITOR_SCHEDULE_SCHEMA } from '../../core/monitors/schedule';
import { START_BODY } from '../crawls/schemas';
import type { ObjectSchema, ResponseSpec } from '../http/routes';

export const json = (description: string, schema: Record<string, unknown>): ResponseSpec => ({ description, content: { 'application/json': { schema } } });

const URL_STRING = { type: 'string', minLength: 1, maxLength: 2048 };
const WEBHOOK = {
  type: ['object', 'null'],
  additionalProperties: false,
  required: ['url'],
  description: 'Where the events go, as on Batch jobs: a public https URL; `signature: true` signs each with the account’s HMAC key (X-Signature). null removes it (PATCH).',
  properties: { url: URL_STRING, signature: { type: 'boolean' } },
};

const PROPERTIES = {
  name: { type: 'string', maxLength: 100 },
  urls: { type: 'array', minItems: 1, maxItems: 100_000, items: URL_STRING, description: 'The pages checked (up to the plan’s monitor_urls, all monitors together).' },
  crawl: {
    ...START_BODY,
    description:
      'Instead of `urls`: a crawl body, as POST /v1/crawls takes it and with the same refusals (a bad one is refused as the crawl would be, 400 or 422, and creates nothing); each check fetches its start page and the results that crawl would find, ' +
      'by its rules (`depth`, `include_patterns`, `exclude_patterns`, `include_documents`, `respect_robots`, its domain and subdomains), at most `max_items` results and `max_pages` pages (a crawl’s defaults when left out; monitor_urls counts the smaller of `max_pages` and 1 + `max_items`). ' +
      'A page found is `new`, one no longer found, or answering 404 or 410, `removed`. `webhook`, `output_format`, `main_content`, `track_changes` and `change_tracking_tag` belong to a crawl job: 400 invalid_argument naming the field (`main_content` and `webhook` are the monitor’s own).',
  },
  schedule: MONITOR_SCHEDULE_SCHEMA,
  css_extractor: { type: 'object', minProperties: 1, maxProperties: 50, additionalProperties: { oneOf: [{ type: 'string' }, { type: 'object' }] }, description: 'Fields compared one by one (as css_extractor on GET /v1/); their changes are in `diff.fields`.' },
  // The rest is checked by core/monitors/inputs.ts, whose refusals name the part at fault (`extract.mode`, `extract.fields[2]`).
  extract: {
    oneOf: [{ type: 'string' }, { type: 'object' }],
    description:
      'Extract’s fields compared one by one (as extract and extract_fields on GET /v1/; not with css_extractor): a mode ("auto", "native", "standard"), or `{mode?, fields?}` with `fields` 1 to 50 dotted field names. A page of a domain not prepared yet is compared on its text until the domain is ready.',
  },
  main_content: { type: 'boolean', description: 'Compare the page’s main content (as main_content on GET /v1/ gives it) rather than the whole page: a change elsewhere on the page is not announced.' },
  webhook: WEBHOOK,
};

export const CREATE_BODY: ObjectSchema = { type: 'object', additionalProperties: false, required: ['schedule'], properties: PROPERTIES } as ObjectSchema;
export const PATCH_BODY: ObjectSchema = { type: 'object', additionalProperties: false, minProperties: 1, properties: PROPERTIES } as ObjectSchema;

export const PAGE_QUERY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { limit: { type: 'integer', minimum: 1, maximum: 100 }, cursor: { type: 'string', minLength: 1, maxLength: 200 } },
};

const TIME = { type: 'string', format: 'date-time' };
const NULLABLE_TIME = { type: ['string', 'null'], format: 'date-time' };

export const MONITOR = {
  type: 'object',
  required: ['monitor_id', 'name', 'status', 'schedule', 'next_check_at', 'created_at'],
  properties: {
    monitor_id: { type: 'string' },
    name: { type: 'string' },
    status: { type: 'string', enum: ['active', 'paused'] },
    urls: { type: ['array', 'null'], items: { type: 'string' } },
    crawl: { type: ['object', 'null'] },
    schedule: { type: 'object' },
    css_extractor: { type: 'object' },
    extract: { type: 'object', properties: { mode: { type: 'string' }, fields: { type: 'array', items: { type: 'string' } } } },
    main_content: { type: 'boolean' },
    webhook: { type: ['object', 'null'] },
    next_check_at: NULLABLE_TIME,
    baseline_at: NULLABLE_TIME,
    last_check_id: { type: ['string', 'null'] },
    check_count: { type: 'integer' },
    created_at: TIME,
    updated_at: TIME,
  },
};

export const CHECK = {
  type: 'object',
  required: ['check_id', 'status', 'started_at', 'pages_checked', 'new', 'changed', 'removed', 'credits'],
  properties: {
    check_id: { type: 'string' },
    status: { type: 'string', enum: ['running', 'completed', 'failed', 'skipped'] },
    trigger: { type: 'string', enum: ['scheduled', 'manual'] },
    baseline: { type: 'boolean', description: 'The first check: it records the versions later checks compare with and announces no page.' },
    scheduled_at: NULLABLE_TIME,
    started_at: TIME,
    ended_at: NULLABLE_TIME,
    pages_checked: { type: 'integer' },
    new: { type: 'integer' },
    changed: { type: 'integer' },
    removed: { type: 'integer' },
    same: { type: 'integer' },
    failed: { type: 'integer' },
    credits: { type: 'integer' },
    failure_reason: { type: 'string', description: 'A failed check: why (insufficient_credits, subscription_inactive, monitor_deleted, internal); a skipped one: overlap.' },
    failure_detail: { type: 'string' },
  },
};

export const CHANGE = {
  type: 'object',
  required: ['url', 'change_status', 'fetched_at'],
  properties: {
    url: { type: 'string' },
    change_status: { type: 'string', enum: ['new', 'changed', 'removed', 'failed'] },
    diff: { type: ['object', 'null'], properties: { text: { type: 'string' }, fields: { type: 'object' } } },
    fetched_at: TIME,
    previous_fetched_at: NULLABLE_TIME,
    error: { type: 'string' },
  },
};

/** On create and change: a `crawl` body POST /v1/crawls refuses with 422. */
export const CRAWL_BODY_422 = { 422: { description: 'A `crawl` body POST /v1/crawls would refuse with 422: invalid_start_url, an out-of-range value or change_tracking_tag without track_changes (invalid_parameter)' } };

export const errors = {
  400: {
    description:
      'invalid_argument (the detail and `parameter` name the field; a schedule shorter than the plan allows names `minimum_interval_seconds`), callback_url_must_be_https, webhook_signing_requires_active_key; a `crawl` body’s refusals as POST /v1/crawls answers them (invalid_parameter, unknown_parameter)',
  },
  401: { description: 'API key missing or invalid (unauthenticated)' },
  404: { description: 'No such monitor or check on the account (not_found)' },
  503: { description: 'A component is down (service_unavailable, with Retry-After)' },
};
