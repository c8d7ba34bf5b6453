/**
 * The worker process: runs every workflow and activity of the service on TEMPORAL_TASK_QUEUE, and the
 * light activities (webhooks, progress and end records, retention, the reconciler) on its light task
 * queue beside it, with slots of their own (WORKER_LIGHT_ACTIVITIES).
 */
import os from 'node:os';
import { DefaultLogger, NativeConnection, Runtime, Worker, type LogEntry } from '@temporalio/worker';
import { createActivities } from '../activities';
import { workContext } from '../activities/failures';
import { createAccounts } from '../core/accounts';
import { processConfig } from '../base/config';
import { openDatabase } from '../base/db';
import { SERVICE_INDEXES } from '../core/indexes';
import { announceReady, onShutdown, retryUntil } from '../base/lifecycle';
import { startHeartbeat } from '../core/liveness';
import { createLogger, type Logger } from '../base/log';
import { lightTaskQueue } from '../core/jobs/workflow-names';
import { connectTemporal, SEARCH_ATTRIBUTES } from '../base/temporal';
import { createFetching } from '../core/fetch/service';
import { createWorkerServices } from '../core/worker-services';
import { workflowBundlePath } from './bundle';
import { ensureSchedules } from './schedules';

function installRuntimeLogger(log: Logger, level: string): void {
  const levels = { TRACE: 'debug', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;
  Runtime.install({
    logger: new DefaultLogger(level === 'debug' ? 'DEBUG' : 'INFO', (entry: LogEntry) => {
      log[levels[entry.level]](entry.message, entry.meta);
    }),
  });
}

/** Registers our search attributes on clusters that lack them (the dev server gets them at start). */
async function ensureSearchAttributes(address: string, namespace: string, log: Logger): Promise<void> {
  const temporal = connectTemporal({ temporalAddress: address, temporalNamespace: namespace });
  try {
    const { customAttributes } = await temporal.connection.operatorService.listSearchAttributes({ namespace });
    const missing = Object.entries(SEARCH_ATTRIBUTES).filter(([name]) => !(name in (customAttributes ?? {})));
    if (missing.length === 0) return;
    await temporal.connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map(([name]) => [name, 2 /* KEYWORD */])),
    });
    log.info('search attributes registered', { names: missing.map(([name]) => name) });
  } finally {
    await temporal.close();
  }
}

async function main(): Promise<void> {
  const config = processConfig();
  const log = createLogger(config.logLevel, { component: 'worker' });
  installRuntimeLogger(log.child({ source: 'temporal' }), config.logLevel);
  const address = config.temporalAddress;
  if (!address) throw new Error('TEMPORAL_ADDRESS is not set');

  const [codePath, db, connection] = await Promise.all([
    workflowBundlePath(config.stackDir, log),
    retryUntil('database', log, () => openDatabase(config, log, { indexes: SERVICE_INDEXES })),
    retryUntil('temporal', log, () => NativeConnection.connect({ address })),
  ]);
  await retryUntil('temporal operator', log, () => ensureSearchAttributes(address, config.temporalNamespace, log));

  const identity = `${process.pid}@${os.hostname()}`;
  const accounts = createAccounts({ db: db.db, config, log });
  // The worker's own fetch engine and browser pool; crawl pages go through mode=auto.
  const fetching = createFetching({ config, log, db: db.db });
  const temporal = connectTemporal(config);
  const services = createWorkerServices({ config, log, db: db.db, temporal: temporal.client, accounts, fetching, identity, current: workContext });
  const activities = createActivities({ config, log, identity, ...services });
  const worker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.temporalTaskQueue,
    workflowBundle: { codePath },
    activities,
    identity,
    // Slots are Temporal's own: a worker takes no more than these, the rest waits for any worker.
    maxConcurrentActivityTaskExecutions: config.workerMaxActivities,
    maxConcurrentWorkflowTaskExecutions: config.workerMaxWorkflowTasks,
    shutdownGraceTime: `${config.shutdownTimeoutMs}ms`,
  });

  // Activities only: the workflows send their light activities here (workflows/light-queue.ts).
  const light = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: lightTaskQueue(config.temporalTaskQueue),
    activities,
    identity,
    maxConcurrentActivityTaskExecutions: config.workerLightActivities,
    shutdownGraceTime: `${config.shutdownTimeoutMs}ms`,
  });

  await retryUntil('schedules', log, () => ensureSchedules(temporal.client, config, log));

  const running = Promise.all([worker.run(), light.run()]);
  // Readiness counts this worker alive while these records keep coming (core/liveness.ts): Temporal's
  // list of pollers keeps a dead worker for minutes.
  const heartbeat = await startHeartbeat({
    db: db.db,
    identity,
    taskQueue: config.temporalTaskQueue,
    intervalMs: config.workerHeartbeatMs,
    alive: () => worker.getState() === 'RUNNING' && light.getState() === 'RUNNING',
    log,
  });
  log.info('worker running', { task_queue: config.temporalTaskQueue, light_task_queue: lightTaskQueue(config.temporalTaskQueue), identity });
  announceReady({ identity });

  onShutdown(log, config.shutdownTimeoutMs, async () => {
    // First, so that readiness stops counting this worker at once.
    await heartbeat.stop();
    // Temporal's runtime also stops its workers on SIGTERM/SIGINT; shut down only what still runs.
    for (const each of [worker, light]) if (each.getState() === 'RUNNING') each.shutdown();
    await running;
    await services.close();
    await fetching.close();
    await temporal.close();
    await connection.close();
    await db.close();
  });
  await running;
}

main().catch((error: unknown) => {
  process.stderr.write(`worker failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
