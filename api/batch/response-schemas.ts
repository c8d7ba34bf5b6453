/**
 * The JSON bodies the Batch routes answer, as schemas (the OpenAPI document's, so the contract test
 * checks every body): the clients' `Job`, `Run`, `TaskResult`, `TaskHistoryResponse` and the rest.
 * Members the answer always carries are required; optional ones are declared with their types.
 */
import { SCHEDULE_SCHEMA } from '../../core/batch/schedules/parse';

type Schema = Record<string, unknown>;

const string = { type: 'string' };
const nullableString = { type: ['string', 'null'] };
const integer = { type: 'integer', minimum: 0 };
const timestamp = { type: 'string', format: 'date-time' };
const nullableTimestamp = { type: ['string', 'null'], format: 'date-time' };
const object = (required: string[], properties: Schema): Schema => ({ type: 'object', required, properties });
const page = (name: string, item: Schema): Schema => object([name, 'next_cursor'], { [name]: { type: 'array', items: item }, next_cursor: nullableString });

const SPEND = object(['credits', 'cost'], { credits: integer, cost: { type: 'number', minimum: 0 } });
const PROBLEM = object(['type', 'title', 'status', 'code'], { type: string, title: string, status: { type: 'integer' }, code: string, detail: string });
export const WEBHOOK_SETTING = object(['url', 'signature'], { url: string, signature: { type: 'boolean' } });

export const RUN = object(['run_id', 'job_id', 'run_sequence', 'status', 'trigger', 'stats', 'last_batch_received', 'pause_state', 'created_at', 'updated_at'], {
  run_id: string,
  job_id: string,
  run_sequence: { type: 'integer', minimum: 1 },
  status: { type: 'string', enum: ['pending', 'running', 'completed', 'failed', 'stopped', 'deleted'] },
  trigger: { type: 'string', enum: ['manual', 'scheduled'] },
  stats: object(['total', 'completed', 'successful', 'failed', 'spend'], {
    total: integer,
    completed: integer,
    successful: integer,
    failed: integer,
    failure_reasons: { type: 'object', additionalProperties: integer },
    spend: SPEND,
  }),
  last_batch_received: { type: 'boolean' },
  pause_state: { type: 'string', enum: ['active', 'paused'] },
  ingest_status: { type: 'string', enum: ['pending', 'done'] },
  created_at: nullableTimestamp,
  updated_at: nullableTimestamp,
  rerun_of: string,
  failure_reason: string,
  failure_detail: string,
  webhook_outcome: { type: 'string', enum: ['pending', 'delivered', 'failed', 'not_started'] },
});

export const JOB = object(['job_id', 'type', 'status', 'format', 'zenrows_params', 'webhook', 'task_count', 'latest_run', 'created_at', 'updated_at'], {
  job_id: string,
  type: { type: 'string', enum: ['regular', 'scheduled'] },
  status: { type: 'string', enum: ['open', 'closed', 'deleted'] },
  format: { type: 'string', enum: ['html', 'markdown', 'plaintext', 'pdf', 'json'] },
  zenrows_params: { type: 'object', additionalProperties: string },
  external_id: string,
  name: string,
  metadata: { type: 'object', additionalProperties: string },
  webhook: { oneOf: [WEBHOOK_SETTING, { type: 'null' }] },
  schedule: SCHEDULE_SCHEMA,
  schedule_state: { type: 'string', enum: ['active', 'paused'] },
  next_scheduled_run: nullableTimestamp,
  task_count: integer,
  latest_run: { oneOf: [RUN, { type: 'null' }] },
  created_at: nullableTimestamp,
  updated_at: nullableTimestamp,
});

export const CREATED = object(['job_id', 'status', 'latest_run', 'accepted_tasks', 'webhook'], {
  job_id: string,
  status: { type: 'string', enum: ['open', 'closed'] },
  latest_run: { oneOf: [RUN, { type: 'null' }] },
  accepted_tasks: integer,
  webhook: { oneOf: [WEBHOOK_SETTING, { type: 'null' }] },
});

export const JOBS_PAGE = page('jobs', JOB);
export const RUNS_PAGE = page('runs', RUN);

export const ADDED = object(['accepted_tasks', 'job_status', 'latest_run'], {
  accepted_tasks: integer,
  job_status: { type: 'string', enum: ['open', 'closed'] },
  latest_run: { oneOf: [RUN, { type: 'null' }] },
});

export const RERUN = object(['job_id', 'status', 'latest_run', 'rerun_of', 'retried_tasks', 'inherited_tasks'], {
  job_id: string,
  status: { type: 'string', enum: ['open', 'closed'] },
  latest_run: RUN,
  rerun_of: nullableString,
  retried_tasks: integer,
  inherited_tasks: integer,
});

const TASK_SPEND = object(['credits', 'cost'], { credits: integer, cost: { type: 'number', minimum: 0 } });
export const RESULTS_PAGE = page(
  'results',
  object(['task_id', 'run_id', 'url', 'method', 'status', 'spend', 'created_at', 'updated_at'], {
    task_id: string,
    external_id: string,
    run_id: string,
    url: string,
    metadata: { type: 'object', additionalProperties: string },
    method: { type: 'string', enum: ['GET'] },
    status: { type: 'string', enum: ['pending', 'processing', 'successful', 'failed', 'expired'] },
    type: { type: 'string', enum: ['html', 'json', 'markdown', 'plaintext', 'pdf'] },
    result_url: string,
    error: PROBLEM,
    source_run_id: string,
    change_status: { type: 'string', enum: ['new', 'same', 'changed'], description: 'With track_changes in zenrows_params (our extension): the page against its URL’s previous version.' },
    spend: object(['total', 'last_attempt'], { total: TASK_SPEND, last_attempt: TASK_SPEND }),
    created_at: timestamp,
    updated_at: timestamp,
  }),
);

export const HISTORY = object(['events'], {
  events: {
    type: 'array',
    items: object(['started_at', 'ended_at', 'attempt', 'spend'], { started_at: timestamp, ended_at: timestamp, attempt: { type: 'integer', minimum: 1 }, error: PROBLEM, spend: TASK_SPEND }),
  },
});

const EXPORT_STATUS = { type: 'string', enum: ['pending', 'running', 'completed', 'failed'] };
export const EXPORT_STARTED = object(['export_id', 'status', 'created_at', 'expires_at'], { export_id: string, status: EXPORT_STATUS, created_at: timestamp, expires_at: timestamp });
export const EXPORT = object(['export_id', 'status', 'error', 'download_url', 'created_at', 'expires_at'], {
  export_id: string,
  status: EXPORT_STATUS,
  error: nullableString,
  download_url: nullableString,
  created_at: timestamp,
  expires_at: timestamp,
});

export const DELIVERIES = object(['deliveries'], {
  deliveries: {
    type: 'array',
    items: object(['event_id', 'run_id', 'event_type', 'state', 'url', 'attempts'], {
      event_id: string,
      run_id: string,
      event_type: string,
      state: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
      url: string,
      attempts: {
        type: 'array',
        items: object(['attempt', 'at', 'elapsed_ms'], { attempt: { type: 'integer', minimum: 1 }, at: timestamp, elapsed_ms: { type: 'number', minimum: 0 }, status_code: { type: 'integer' }, error: string }),
      },
    }),
  },
});

export const INPUT_CREATED = object(['file_input_id', 'upload', 'expires_at'], {
  file_input_id: string,
  upload: object(['method', 'url', 'headers', 'expires_at'], { method: { type: 'string', enum: ['PUT'] }, url: string, headers: { type: 'object', additionalProperties: string }, expires_at: timestamp }),
  expires_at: timestamp,
});
