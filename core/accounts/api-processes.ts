/**
 * The API processes alive now, so that what each process decides alone in memory (an account's request
 * budget, request-budget.ts; a client network's failed key look-ups, auth-failures.ts) is a share of
 * the limit and the shares add up to it, however many processes serve (API_PROCESSES, replicas).
 *
 * Each API process records that it is alive as workers do (core/liveness.ts: one record per process,
 * rewritten every WORKER_HEARTBEAT_MS by that process only, under its own group), and reads how many
 * records keep changing at the same pace. A process always counts itself; while the database cannot
 * be read it keeps the last count. A process that dies stops counting after five missed beats (about
 * five seconds by default): until then the others serve a smaller share than they could, never more.
 * A process that starts is counted by the others within a beat or two: meanwhile the account's
 * processes may admit up to one share more than the limit.
 */
import type { Db } from 'mongodb';
import type { Logger } from '../../base/log';
import { LivenessReader, startHeartbeat, type Heartbeat } from '../liveness';

/** The liveness group of API processes (worker records are grouped by their task queue). */
export const API_PROCESS_GROUP = '#api-processes';

export class ApiProcesses {
  private live = 1;
  private heartbeat: Heartbeat | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly reader: LivenessReader;

  constructor(
    private readonly db: Db,
    /** This process's record. */
    readonly identity: string,
    private readonly intervalMs: number,
    private readonly log: Logger,
  ) {
    this.reader = new LivenessReader(db, API_PROCESS_GROUP, intervalMs);
  }

  /** Live API processes, this one included: each takes this share of an account-wide limit. */
  get count(): number {
    return this.live;
  }

  /** Records this process and keeps counting the others; a database away now is retried at each beat. */
  async start(): Promise<void> {
    if (this.heartbeat) return;
    let stopped = false;
    this.heartbeat = await startHeartbeat({ db: this.db, identity: this.identity, taskQueue: API_PROCESS_GROUP, intervalMs: this.intervalMs, alive: () => !stopped, log: this.log });
    const own = this.heartbeat;
    this.heartbeat = {
      async stop() {
        stopped = true;
        await own.stop();
      },
    };
    await this.read();
    const tick = (): void => {
      void this.read().finally(() => {
        if (this.heartbeat) this.timer = setTimeout(tick, this.intervalMs).unref();
      });
    };
    this.timer = setTimeout(tick, this.intervalMs).unref();
  }

  /** Removes this process's record (the others take its share at their next read). */
  async stop(): Promise<void> {
    const heartbeat = this.heartbeat;
    this.heartbeat = undefined;
    clearTimeout(this.timer);
    await heartbeat?.stop();
  }

  private async read(): Promise<void> {
    try {
      const alive = await this.reader.alive(this.intervalMs);
      alive.add(this.identity);
      this.live = alive.size;
    } catch {
      // The database is away: keep the last count.
    }
  }
}
