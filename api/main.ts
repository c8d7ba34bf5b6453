/** The API process: Koa on PORT, started by the launcher locally or by the container in production. */
import http from 'node:http';
import { config as loadConfig } from '../core/config';
import { openDatabase } from '../core/db';
import { announceReady, onShutdown, retryUntil } from '../core/lifecycle';
import { createLogger } from '../core/log';
import { connectTemporal } from '../core/temporal';
import { createApp } from './app';
import { answerClientErrors } from './http/client-errors';

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel, { component: 'api' });
  const db = await retryUntil('database', log, () => openDatabase(config, log));
  const temporal = connectTemporal(config);
  const app = createApp({ config, log, db, temporal });

  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  answerClientErrors(server, config.docsUrl);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, resolve);
  });
  log.info('api listening', { host: config.host, port: config.port, url: config.publicUrl });
  announceReady({ port: config.port });

  onShutdown(log, config.shutdownTimeoutMs, async () => {
    // Stop accepting, let in-flight requests finish, then close the clients they used.
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
    await temporal.close();
    await db.close();
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`api failed to start: ${(error as Error).message}\n`);
  process.exit(1);
});
