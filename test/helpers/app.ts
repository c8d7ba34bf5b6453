/**
 * The one app harness. Against the test stack's real database and Temporal: an accounts service
 * (optionally with a manual clock), the API's own request listener (`createListener`, or another
 * listener built from the same dependencies) served by the API's own server on an ephemeral loopback
 * port, for testing route declarations and middleware without adding routes to the running service,
 * and accounts with keys made to measure.
 */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createListener } from '../../api/app';
import { apiDeps, type ApiDeps } from '../../api/deps';
import { createApiServer } from '../../api/http/server';
import type { Route } from '../../api/http/routes';
import { createAccounts, type Accounts, type Clock, type Principal } from '../../core/accounts';
import { loadConfig, type Config } from '../../base/config';
import { openDatabase, type Database } from '../../base/db';
import { createLogger, type LogSink } from '../../base/log';
import { connectTemporal } from '../../base/temporal';
import { createFetching } from '../../core/fetch/service';
import { testStack } from './stack';

/** The configuration the stack's API runs with (same database, same task queue), plus overrides. */
export function serviceConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({ ...testStack().component('api').spec.env, ...overrides });
}

export interface AccountsHandle {
  accounts: Accounts;
  db: Database;
  config: Config;
  close(): Promise<void>;
}

export interface HarnessOptions {
  clock?: Clock;
  /** Configuration variables on top of the stack's. */
  env?: Record<string, string>;
  /** Where log lines go (dropped by default). */
  sink?: LogSink;
}

/** A separate accounts service with its own connection pool: what another API process would have. */
export async function openAccounts(options: HarnessOptions = {}): Promise<AccountsHandle> {
  const config = serviceConfig(options.env);
  const log = createLogger('debug', {}, options.sink ?? (() => undefined));
  const db = await openDatabase(config, log);
  const accounts = createAccounts({ db: db.db, config, log, clock: options.clock });
  return {
    accounts,
    db,
    config,
    async close() {
      await accounts.slots.abandon();
      await db.close();
    },
  };
}

export interface TestApp extends AccountsHandle {
  url: string;
  deps: ApiDeps;
}

/** The API's listener with `routes` added (or the listener `app` builds), on an ephemeral loopback port. */
export async function startApp(
  routes?: (deps: ApiDeps) => Route[],
  options: HarnessOptions & { app?: (deps: ApiDeps) => http.RequestListener } = {},
): Promise<TestApp> {
  const handle = await openAccounts(options);
  const log = createLogger('debug', {}, options.sink ?? (() => undefined));
  const temporal = connectTemporal(handle.config);
  const fetching = createFetching({ config: handle.config, log, db: handle.db.db });
  const deps = apiDeps({ config: handle.config, log, db: handle.db, temporal, accounts: handle.accounts, fetching });
  const server = createApiServer(options.app ? options.app(deps) : createListener(deps, routes?.(deps)), handle.config);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    ...handle,
    url: `http://127.0.0.1:${port}`,
    deps,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await deps.services.close();
      await fetching.close();
      await temporal.close();
      await handle.close();
    },
  };
}

export interface TestAccount {
  accountId: string;
  key: string;
  keyId: string;
  principal: Principal;
}

/** A new account with one key; `credits` / `concurrency` override the plan's limits. */
export async function newAccount(
  accounts: Accounts,
  options: { plan?: string; credits?: number; concurrency?: number; keyCap?: number; requestsPerSecond?: number; requestBurst?: number } = {},
): Promise<TestAccount> {
  const overrides = Object.fromEntries(
    Object.entries({ credits: options.credits, concurrency: options.concurrency, requestsPerSecond: options.requestsPerSecond, requestBurst: options.requestBurst }).filter(
      ([, value]) => value !== undefined,
    ),
  );
  const account = await accounts.store.createAccount({ plan: options.plan ?? 'free', overrides });
  const { key, doc } = await accounts.store.createKey(account._id, { creditCap: options.keyCap ?? null });
  return { accountId: account._id, key, keyId: doc.key_id, principal: await accounts.principalFor(account._id, doc.key_id) };
}

/** Reads a JSON or problem response. */
export async function readJson(response: Response): Promise<Record<string, unknown>> {
  const text = await response.text();
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/** A promise with its resolver, to hold work open from the outside. */
export function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}
