import type { Accounts } from '../core/accounts';
import type { Config } from '../base/config';
import type { Database } from '../base/db';
import type { Logger } from '../base/log';
import type { Readiness } from '../core/readiness';
import type { TemporalHandle } from '../base/temporal';
import type { FetchService } from '../engine';

/** What the API's handlers receive; built once in `api/main.ts`, or by tests. */
export interface ApiDeps {
  config: Config;
  log: Logger;
  db: Database;
  temporal: TemporalHandle;
  /** Accounts, keys, plans, charging and concurrency slots (its clock is injectable for tests). */
  accounts: Accounts;
  /** The fetch engine of this process: plain transport, browser pool, mode=auto memory. */
  fetching: FetchService;
  /** Whether the database, Temporal and a worker are there (`/readyz`, and the endpoints that start work). */
  readiness: Readiness;
}
