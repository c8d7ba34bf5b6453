/**
 * An API app built in the test process (`createListener`, the API's own request listener, on an ephemeral port), with
 * real dependencies: the test stack's database and Temporal. For testing route declarations and
 * middleware without adding routes to the running service.
 */
import type { AddressInfo } from 'node:net';
import { createListener } from '../../api/app';
import { createApiServer } from '../../api/http/server';
import type { ApiDeps } from '../../api/deps';
import type { Route } from '../../api/http/routes';
import { createAccounts } from '../../core/accounts';
import { loadConfig, type Config } from '../../core/config';
import { openDatabase } from '../../core/db';
import { createLogger } from '../../core/log';
import { connectTemporal } from '../../core/temporal';
import { createFetchService } from '../../engine/service';
import { testStack } from './stack';

export interface TestApp {
  url: string;
  deps: ApiDeps;
  close(): Promise<void>;
}

/** The configuration the stack's services run with, as this process would load it. */
export function serviceConfig(overrides: Record<string, string> = {}): Config {
  const env = testStack().component('api').spec.env;
  return loadConfig({ ...env, ...overrides });
}

export async function startTestApp(routes?: (deps: ApiDeps) => Route[], overrides: Record<string, string> = {}): Promise<TestApp> {
  const config = serviceConfig(overrides);
  const log = createLogger('error', {}, () => undefined);
  const db = await openDatabase(config, log);
  const temporal = connectTemporal(config);
  const accounts = createAccounts({ db: db.db, config, log });
  const fetching = createFetchService({ config, log, db: db.db });
  const deps: ApiDeps = { config, log, db, temporal, accounts, fetching };
  const server = createApiServer(createListener(deps, routes?.(deps)), config);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    deps,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await accounts.slots.abandon();
      await fetching.close();
      await temporal.close();
      await db.close();
    },
  };
}
