/** JSON Schemas of the crawl routes: validation (ajv) and the OpenAPI document from one source. */
import { API_KEY_QUERY_PROPERTY } from '../auth/authenticate';
import { TAG_PATTERN } from '../../core/changes/keys';
import type { JsonSchema, ObjectSchema } from '../http/routes';
import { CRAWL_WEBHOOK_EVENTS } from '../../core/crawls/types';

const WEBHOOK_EVENTS_ENUM = [...CRAWL_WEBHOOK_EVENTS];

/** A crawl's webhook (our extension): Batch's `{url, signature}` and the moments it is told of. */
const WEBHOOK_REQUEST: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  description:
    'Extension of this service: signed webhook events of the crawl’s moments, delivered like Batch’s (same headers, signature, retries and `event_id` on every retry). ' +
    'Refused before anything starts: an http URL (400 callback_url_must_be_https), a host without an address (400 callback_url_unresolvable), `signature: true` without an active HMAC key (400 webhook_signing_requires_active_key).',
  properties: {
    url: { type: 'string', minLength: 1, maxLength: 2048, description: 'A public https URL.' },
    signature: { type: 'boolean', description: 'Sign each event with the account’s active HMAC key (`X-Signature`), as Batch deliveries are (default false).' },
    events: {
      type: 'array',
      items: { type: 'string', enum: WEBHOOK_EVENTS_ENUM },
      minItems: 1,
      uniqueItems: true,
      description: 'Moments to be told of, as `crawl.<moment>` events (default: started, completed, stopped, failed); `page.failed` (one event per failed page) only when listed. Another value is 422 invalid_parameter.',
    },
  },
};

const WEBHOOK_SETTING: JsonSchema = {
  type: 'object',
  required: ['url', 'signature', 'events'],
  description: 'Extension of this service: the crawl’s webhook (never a secret).',
  properties: { url: { type: 'string' }, signature: { type: 'boolean' }, events: { type: 'array', items: { type: 'string', enum: WEBHOOK_EVENTS_ENUM } } },
};

const count = (description: string): JsonSchema => ({ type: 'integer', minimum: 1, maximum: 100_000, description });

export const START_BODY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    url: { type: 'string', format: 'uri', maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#\\s]', description: 'Public http or https start URL, at most 2,048 characters; a host that is an IP address or a private name is refused (422 invalid_start_url).' },
    depth: count('Link steps to follow from the start URL: at 1, the links on the start page.'),
    max_items: count('Stop after keeping this many URLs.'),
    max_pages: count('Stop after fetching this many pages (both limits together: `max_pages`).'),
    include_patterns: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 2048 }, maxItems: 100, description: 'Keep, and open, only URLs containing one of these texts.' },
    exclude_patterns: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 2048 }, maxItems: 100, description: 'Drop URLs containing any of these texts.' },
    output_format: { type: 'string', enum: ['html', 'markdown'], description: '`html`: also keep each kept page, served as HTML; `markdown`: the same pages served as Markdown (contents and download).' },
    main_content: { type: 'boolean', description: 'Extension of this service: serve only each page’s main content (the article), as HTML or Markdown by `output_format`, which it requires. No extra credits.' },
    respect_robots: {
      type: 'boolean',
      description:
        'Extension of this service: skip what the site’s robots.txt disallows for this service’s user agent (default true). Skipped URLs are listed with `content_status: "skipped"` and `skip_reason: "robots_txt"`, never fetched, never billed; the site’s `Crawl-delay` paces every job at it.',
    },
    include_documents: {
      type: 'boolean',
      description:
        'Extension of this service: documents linked in scope (PDF, DOCX, PPTX, XLSX, ODT/ODS/ODP, CSV) are results (default true); with `output_format` each is kept converted, ' +
        'as Markdown (`markdown`) or as its structure in HTML (`html`), priced as a Fetch of it (1 credit more per started 50 PDF pages past the first 50). ' +
        'false: links whose file name is a document are dropped, and a page that answers as a document anyway is `content_status: "skipped"` with `skip_reason: "document"`, unbilled.',
    },
    discovery: {
      type: 'array',
      items: { type: 'string', enum: ['links'] },
      minItems: 1,
      uniqueItems: true,
      description: 'How pages are found: `["links"]` (links in each page’s HTML). `pagination` is no longer offered to new crawls.',
    },
    track_changes: {
      type: 'boolean',
      description:
        'Extension of this service: fetch every result and keep it as a version of its URL in the account’s history (the one Fetch’s track_changes adds to); ' +
        'each fetched result carries `change_status` (new, changed, same), and when the crawl runs out of pages to open, the URLs of the previous such crawl of this start URL ' +
        '(and tag) that it did not find follow its results with `change_status: "removed"` (reads and download). Billed as the pages it fetches.',
    },
    change_tracking_tag: { type: 'string', pattern: TAG_PATTERN, description: 'Extension of this service: with track_changes, a separate history (of the pages and of the crawl’s URL set).' },
    webhook: WEBHOOK_REQUEST,
  },
};

export const KEY_QUERY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { apikey: API_KEY_QUERY_PROPERTY },
};

export const LIST_QUERY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    apikey: API_KEY_QUERY_PROPERTY,
    cursor: { type: 'string', minLength: 1, description: 'The previous page’s `next_cursor` (400 invalid_request when it is not one).' },
    limit: { type: 'integer', minimum: 1, maximum: 100, description: 'Crawls per page, 1 to 100 (default 20).' },
  },
};

export const READ_QUERY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    apikey: API_KEY_QUERY_PROPERTY,
    cursor: { type: 'string', minLength: 1, description: 'The previous read’s `next_cursor`; omit to start from the first result (400 invalid_cursor when it is not one of this crawl).' },
    limit: { type: 'integer', minimum: 1, maximum: 10_000, description: 'Results per read, 1 to 10,000 (default 1000).' },
  },
};

export const CONTENT_QUERY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    apikey: API_KEY_QUERY_PROPERTY,
    download: { type: 'boolean', description: 'Answer as a file to save (default false).' },
  },
};

const RESULT: JsonSchema = {
  type: 'object',
  required: ['url'],
  properties: {
    url: { type: 'string', format: 'uri' },
    content_status: { type: 'string', enum: ['pending', 'fetched', 'failed', 'skipped'] },
    change_status: { type: 'string', enum: ['new', 'changed', 'same', 'removed'], description: 'Crawls with track_changes (our extension).' },
    skip_reason: { type: 'string', enum: ['robots_txt', 'document'] },
    content_url: { type: 'string' },
  },
};

const CRAWL_PROPERTIES: Record<string, JsonSchema> = {
  crawl_id: { type: 'string', pattern: '^c_' },
  status: { type: 'string', enum: ['running', 'completed', 'stopped', 'failed'] },
  stop_reason: { type: 'string', enum: ['max_items', 'max_pages', 'user'] },
  error: {
    type: 'object',
    required: ['code', 'detail'],
    properties: {
      code: { type: 'string', enum: ['seed_unreachable', 'no_items_found', 'insufficient_credits', 'internal_error', 'domain_not_allowed'] },
      detail: { type: 'string' },
    },
  },
  url: { type: 'string', format: 'uri' },
  depth: { type: 'integer' },
  max_items: { type: 'integer' },
  max_pages: { type: 'integer' },
  include_patterns: { type: 'array', items: { type: 'string' } },
  exclude_patterns: { type: 'array', items: { type: 'string' } },
  output_format: { type: 'string', enum: ['html', 'markdown'] },
  main_content: { type: 'boolean' },
  track_changes: { type: 'boolean' },
  change_tracking_tag: { type: 'string' },
  include_documents: { type: 'boolean' },
  respect_robots: { type: 'boolean' },
  discovery: { type: 'array', items: { type: 'string', enum: ['links', 'pagination'] } },
  extract_calls: { type: 'integer' },
  coverage: {
    type: 'object',
    required: ['pages_fetched', 'pages_failed', 'items_found'],
    properties: { pages_fetched: { type: 'integer' }, pages_failed: { type: 'integer' }, items_found: { type: 'integer' } },
  },
  duplicates_removed: { type: 'integer' },
  webhook: WEBHOOK_SETTING,
  created_at: { type: 'string', format: 'date-time' },
  finished_at: { type: 'string', format: 'date-time' },
};

const CRAWL_REQUIRED = ['crawl_id', 'status', 'url', 'max_items', 'max_pages', 'discovery', 'extract_calls', 'coverage', 'duplicates_removed', 'created_at'];

export const CRAWL: JsonSchema = {
  type: 'object',
  required: [...CRAWL_REQUIRED, 'results', 'next_cursor'],
  properties: { ...CRAWL_PROPERTIES, results: { type: 'array', items: RESULT }, next_cursor: { type: ['string', 'null'] } },
};

export const CRAWL_LIST: JsonSchema = {
  type: 'object',
  required: ['crawls'],
  properties: {
    crawls: { type: 'array', items: { type: 'object', required: CRAWL_REQUIRED, properties: CRAWL_PROPERTIES } },
    next_cursor: { type: 'string', description: 'Absent on the last page.' },
  },
};

export const STOP_RESPONSE: JsonSchema = {
  type: 'object',
  required: ['crawl_id', 'status'],
  properties: {
    crawl_id: CRAWL_PROPERTIES.crawl_id as JsonSchema,
    status: CRAWL_PROPERTIES.status as JsonSchema,
    stop_reason: CRAWL_PROPERTIES.stop_reason as JsonSchema,
    finished_at: CRAWL_PROPERTIES.finished_at as JsonSchema,
  },
};
