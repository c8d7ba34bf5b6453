import type { Accounts } from '../core/accounts';
import type { Config } from '../base/config';
import type { Database } from '../base/db';
import type { Logger } from '../base/log';
import { createReadiness, type Readiness } from '../core/readiness';
import { createServices, type ServiceRoots, type Services } from '../core/services';
import type { TemporalHandle } from '../base/temporal';
import type { FetchService } from '../engine';

/** What the API's handlers receive; built once by `apiDeps` in the process's composition root (api/main.ts, api/mcp/stdio.ts), or by tests. */
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
  /** The domain's commands and queries, each built once for the process (core/services.ts). */
  services: Services;
}

/** The API's dependencies from what the composition root opened: readiness and every service built here, once. */
export function apiDeps(roots: ServiceRoots): ApiDeps {
  return { ...roots, readiness: createReadiness(roots.config, roots.db, roots.temporal), services: createServices(roots) };
}
