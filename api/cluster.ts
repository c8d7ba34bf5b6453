/**
 * API_PROCESSES > 1: this process supervises that many API processes sharing PORT (Node's cluster
 * module hands each accepted connection to one of them). It is ready when every one is, replaces one
 * that dies, and on shutdown asks each to stop (they finish their requests) and waits for them.
 */
import cluster, { type Worker } from 'node:cluster';
import { announceReady, onShutdown } from '../base/lifecycle';
import type { Logger } from '../base/log';

/** A replacement is started at most this often, so a process that cannot start does not spin. */
const RESTART_PAUSE_MS = 1_000;

export async function superviseApiProcesses(options: { processes: number; port: number; log: Logger; shutdownTimeoutMs: number }): Promise<void> {
  const { log } = options;
  let stopping = false;
  const live = new Set<Worker>();

  // With PORT=0 the processes share the port the first one bound; the launcher learns it from us.
  let boundPort = options.port;
  const start = (): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const worker = cluster.fork();
      live.add(worker);
      const onMessage = (message: { type?: string; port?: number }): void => {
        if (message?.type !== 'ready') return;
        worker.off('message', onMessage);
        if (typeof message.port === 'number') boundPort = message.port;
        resolve();
      };
      worker.on('message', onMessage);
      worker.once('exit', (code, signal) => {
        live.delete(worker);
        reject(new Error(`API process ${worker.process.pid} exited before it was ready (code ${code}, signal ${signal})`));
        if (stopping) return;
        log.error('API process exited; starting another', { pid: worker.process.pid, code, signal });
        setTimeout(() => {
          if (!stopping) start().catch((error: unknown) => log.error('API process did not start', { error: (error as Error).message }));
        }, RESTART_PAUSE_MS).unref();
      });
    });

  onShutdown(log, options.shutdownTimeoutMs, async () => {
    stopping = true;
    await Promise.all(
      [...live].map(
        (worker) =>
          new Promise<void>((resolve) => {
            worker.once('exit', () => resolve());
            worker.process.kill('SIGTERM');
          }),
      ),
    );
  });

  await Promise.all(Array.from({ length: options.processes }, start));
  log.info('api processes ready', { processes: options.processes, port: boundPort });
  announceReady({ port: boundPort, processes: options.processes });
}
