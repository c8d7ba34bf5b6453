import type { Logger } from './log';

/**
 * Runs `stop` once on SIGINT, SIGTERM, or when the launching parent goes away (its IPC channel
 * closes), then exits. A stop that takes longer than `timeoutMs` is cut short with exit code 1.
 * Later signals are ignored rather than fatal: a signal sent to the whole process group reaches this
 * process and, a moment later, the launcher's own stop request; the second must not cut the drain short.
 */
export function onShutdown(log: Logger, timeoutMs: number, stop: (reason: string) => Promise<void>): void {
  let stopping = false;
  const begin = (reason: string): void => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { reason });
    const timer = setTimeout(() => {
      log.error('shutdown timed out', { timeout_ms: timeoutMs });
      process.exit(1);
    }, timeoutMs + 2_000);
    timer.unref();
    stop(reason).then(
      () => process.exit(0),
      (error: unknown) => {
        log.error('shutdown failed', { error });
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => begin('SIGINT'));
  process.on('SIGTERM', () => begin('SIGTERM'));
  if (process.send) process.once('disconnect', () => begin('parent exited'));
}

/** Tells a launching parent (if any) that this process is ready. */
export function announceReady(details: Record<string, unknown>): void {
  process.send?.({ type: 'ready', ...details });
}

/** Retries `attempt` with a capped backoff until it succeeds or `signal` aborts. */
export async function retryUntil<T>(
  what: string,
  log: Logger,
  attempt: () => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  for (let delay = 250; ; delay = Math.min(delay * 2, 5_000)) {
    try {
      return await attempt();
    } catch (error) {
      if (signal?.aborted) throw error;
      log.warn(`${what} not reachable yet`, { error: (error as Error).message, retry_in_ms: delay });
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
