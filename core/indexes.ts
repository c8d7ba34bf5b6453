/**
 * The indexes of every collection the service uses, as each domain declares them: the processes'
 * composition roots (API, worker, admin, MCP over stdio) pass this list to `openDatabase`.
 */
import type { IndexRegistration } from '../base/db';
import { ACCOUNT_INDEXES } from './accounts/indexes';
import { BATCH_INDEXES } from './batch/store';
import { CRAWL_INDEXES } from './crawls/store';
import { EXTRACT_INDEXES } from './extract/store';
import { WINDOW_COUNT_INDEXES } from './fetch/window-counts';
import { ACTIVE_JOB_INDEXES } from './jobs/active-jobs';
import { BLOB_INDEXES } from './jobs/blobs';
import { CHANGE_INDEXES } from './changes/store';
import { RUN_LEASE_INDEXES } from './jobs/run-leases';
import { JOB_START_INDEXES } from './jobs/start';
import { MCP_SESSION_INDEXES } from './mcp/sessions';
import { MONITOR_INDEXES } from './monitors/store';
import { OAUTH_TOKEN_INDEXES } from './oauth/tokens';
import { POLITENESS_INDEXES } from './politeness/store';
import { RATE_LIMIT_INDEXES } from './accounts/rate-limits';
import { SELF_CHECK_INDEXES } from './selfcheck';
import { WEBHOOK_INDEXES } from './webhooks/events';

export const SERVICE_INDEXES: readonly IndexRegistration[] = [
  SELF_CHECK_INDEXES,
  ACCOUNT_INDEXES,
  ACTIVE_JOB_INDEXES,
  RUN_LEASE_INDEXES,
  JOB_START_INDEXES,
  BLOB_INDEXES,
  CRAWL_INDEXES,
  EXTRACT_INDEXES,
  BATCH_INDEXES,
  MCP_SESSION_INDEXES,
  POLITENESS_INDEXES,
  RATE_LIMIT_INDEXES,
  WINDOW_COUNT_INDEXES,
  OAUTH_TOKEN_INDEXES,
  CHANGE_INDEXES,
  MONITOR_INDEXES,
  WEBHOOK_INDEXES,
];
