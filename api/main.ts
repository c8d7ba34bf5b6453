/**
 * The API process: its request listener (Fetch through http/lean.ts, the rest through Koa) on PORT,
 * started by the launcher locally or by the container in production.
 * With API_PROCESSES > 1 it supervises that many such processes instead (cluster.ts).
 */
import cluster from 'node:cluster';
import { createAccounts } from '../core/accounts';
import { processConfig } from '../base/config';
import { openDatabase } from '../base/db';
import { SERVICE_INDEXES } from '../core/indexes';
import { announceReady, onShutdown, retryUntil } from '../base/lifecycle';
import { createLogger } from '../base/log';
import { reconcile } from '../core/reconcile';
import { connectTemporal } from '../base/temporal';
import { createFetching } from '../core/fetch/service';
import { createAccountApp, createListener } from './app';
import { superviseApiProcesses } from './cluster';
import { createMcpHttp } from './mcp/http';
import { createApiServer } from './http/server';
import { apiDeps } from './deps';
import { bindApiPort } from './listen';

async function main(): Promise<void> {
  const launched = processConfig();
  if (launched.apiProcesses > 1 && cluster.isPrimary) {
    const log = createLogger(launched.logLevel, { component: 'api-supervisor' });
    await superviseApiProcesses({ processes: launched.apiProcesses, port: launched.port, log, shutdownTimeoutMs: launched.shutdownTimeoutMs });
    return;
  }
  const log = createLogger(launched.logLevel, { component: 'api' });
  // PORT=0: bound now, so that everything built below knows the port (listen.ts).
  const bound = await bindApiPort(processConfig());
  const { config } = bound;
  const db = await retryUntil('database', log, () => openDatabase(config, log, { indexes: SERVICE_INDEXES }));
  const temporal = connectTemporal(config);
  const accounts = createAccounts({ db: db.db, config, log });
  accounts.start();
  // Among the live API processes: each takes its share of every account's request budget.
  await accounts.serve();
  const fetching = createFetching({ config, log, db: db.db });
  const deps = apiDeps({ config, log, db, temporal, accounts, fetching });
  const mcp = createMcpHttp(deps);
  const server = createApiServer(createListener(deps, undefined, mcp), config);
  const port = await bound.listen(server);
  log.info('api listening', { host: config.host, port, url: config.publicUrl });
  // APP_PORT: the account surfaces (agent signup, claim page) on their own listener, as {app_url}.
  const appServer = config.appPort === undefined ? undefined : createApiServer(createAccountApp(deps).callback(), config);
  if (appServer) {
    await new Promise<void>((resolve, reject) => {
      appServer.once('error', reject);
      appServer.listen(config.appPort, config.host, resolve);
    });
    log.info('account surfaces listening', { host: config.host, port: config.appPort });
  }
  announceReady({ port });
  // Starts cut short when an API died are settled now, not at the next scheduled pass; readiness does not wait for it.
  void reconcile({ db: db.db, client: temporal.client, config, accounts, log }).catch((error: unknown) => log.warn('reconcile at start failed', { error }));

  onShutdown(log, config.shutdownTimeoutMs, async () => {
    // Stop accepting, let in-flight requests finish, then close the clients they used.
    await mcp.close();
    await Promise.all(
      [server, appServer].map(
        (listener) =>
          listener &&
          new Promise<void>((resolve) => {
            listener.close(() => resolve());
            listener.closeIdleConnections();
          }),
      ),
    );
    await accounts.stop();
    await deps.services.close();
    await fetching.close();
    await temporal.close();
    await db.close();
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`api failed to start: ${(error as Error).message}\n`);
  process.exit(1);
});
