/** The Batch surface's request schemas and shared response declarations (they also make its OpenAPI part). */
import { SCHEDULE_SCHEMA } from '../../core/batch/schedules/parse';
import type { ObjectSchema, ResponseSpec } from '../http/routes';

/** A JSON answer with its schema (response-schemas.ts), so the contract test checks its body. */
export const json = (description: string, schema: Record<string, unknown>): ResponseSpec => ({ description, content: { 'application/json': { schema } } });

export const PARAM_VALUE = { oneOf: [{ type: 'string' }, { type: 'boolean' }, { type: 'integer' }, { type: 'object' }, { type: 'array' }] };
export const PARAMS = { type: 'object', additionalProperties: PARAM_VALUE, description: 'Fetch parameters (as on GET /v1/) applied to every task.' };
export const METADATA = { type: 'object', maxProperties: 20, additionalProperties: { type: 'string', maxLength: 1024 }, propertyNames: { maxLength: 64, pattern: '^[A-Za-z0-9._-]+$' } };
export const EXTERNAL_ID = { type: 'string', maxLength: 128, pattern: '^[A-Za-z0-9._-]+$' };
export const TASK = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    url: { type: 'string', minLength: 1, maxLength: 8192 },
    external_id: EXTERNAL_ID,
    metadata: METADATA,
    method: { type: 'string', enum: ['GET', 'POST'], description: 'GET only for now; POST is refused per task.' },
    body: {},
    zenrows_params: PARAMS,
  },
};
export const WEBHOOK = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: { url: { type: 'string', minLength: 1, maxLength: 2048 }, signature: { type: 'boolean' } },
};
export const CREATE_BODY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    type: { type: 'string', enum: ['regular', 'scheduled'], description: '`scheduled` starts no run: `schedule` fires them.' },
    status: { type: 'string', enum: ['open', 'closed'] },
    schedule: { ...SCHEDULE_SCHEMA, description: 'For `type: scheduled`: exactly one of `at`, `rate`, `calendar`, and `timezone` with `at` and `calendar`.' },
    zenrows_params: PARAMS,
    tasks: { type: 'array', maxItems: 100_000, items: TASK },
    file_input_id: { type: 'string', minLength: 1, maxLength: 64 },
    external_id: EXTERNAL_ID,
    name: { type: 'string', maxLength: 100 },
    metadata: METADATA,
    webhook: WEBHOOK,
  },
};
export const ADD_BODY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['tasks'],
  properties: { tasks: { type: 'array', minItems: 1, maxItems: 10_000, items: TASK }, last_batch: { type: ['boolean', 'null'] } },
};
export const PUT_WEBHOOK: ObjectSchema = { ...WEBHOOK, required: ['url', 'signature'] } as ObjectSchema;
export const PUT_SCHEDULE: ObjectSchema = SCHEDULE_SCHEMA as unknown as ObjectSchema;
export const SCHEDULE_STATE_BODY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['schedule_state'],
  properties: { schedule_state: { type: 'string', enum: ['active', 'paused'] } },
};
export const LIST_QUERY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 100 },
    cursor: { type: 'string', minLength: 1, maxLength: 200 },
    type: { type: 'string', enum: ['regular', 'scheduled'] },
    status: { type: 'string', enum: ['open', 'closed', 'deleted'] },
  },
};
export const RUNS_QUERY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { limit: { type: 'integer', minimum: 1, maximum: 100 }, cursor: { type: 'string', minLength: 1, maxLength: 200 } },
};
export const RESULTS_QUERY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    status: { type: 'string', enum: ['all', 'successful', 'failed', 'processing', 'pending'] },
    cursor: { type: 'string', minLength: 1, maxLength: 200 },
  },
};
export const RERUN_QUERY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { status: { type: 'string', pattern: '^(successful|failed|pending|processing)(,(successful|failed|pending|processing))*$', description: 'Rerun only tasks with these statuses (comma-separated).' } },
};
export const EXPORT_QUERY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { format: { type: 'string', enum: ['ndjson', 'csv'], description: 'File format (default ndjson).' } },
};
export const INPUT_BODY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['type'],
  properties: {
    type: { type: 'string', enum: ['csv'] },
    csv: {
      type: 'object',
      additionalProperties: false,
      required: ['fields'],
      properties: {
        delimiter: { type: 'string', minLength: 1, maxLength: 1 },
        quote: { type: 'string', minLength: 1, maxLength: 1 },
        header: { type: 'boolean' },
        fields: {
          type: 'object',
          additionalProperties: false,
          required: ['url'],
          properties: {
            url: { oneOf: [{ type: 'string', minLength: 1 }, { type: 'integer', minimum: 0 }] },
            external_id: { oneOf: [{ type: 'string', minLength: 1 }, { type: 'integer', minimum: 0 }] },
          },
        },
      },
    },
  },
};

export const errors = {
  400: { description: 'invalid_argument' },
  401: { description: 'API key missing, invalid or in the query string (unauthenticated)' },
  404: { description: 'No such job, run, task or export on the account (not_found)' },
  503: { description: 'A component is down, or no worker runs for work to start (service_unavailable, with Retry-After)' },
};

export const SANDBOX = { 'Content-Security-Policy': 'sandbox', 'X-Content-Type-Options': 'nosniff' };
