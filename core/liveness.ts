/**
 * Worker liveness records: each worker process rewrites its own record every WORKER_HEARTBEAT_MS,
 * and readiness counts a worker alive while its record keeps changing.
 *
 * Why not Temporal alone: DescribeTaskQueue lists a task queue's pollers with the time each last
 * asked for work, but a healthy worker's long poll lasts about 60 s (so its time ages that much), and
 * a SIGKILLed worker stays listed for 5 minutes after its last poll (measured on the dev server, see
 * readiness.ts). Readiness asks for both: a worker Temporal lists as a poller of the queue AND whose
 * record changed within five heartbeats, so a dead worker is noticed within about five seconds.
 *
 * One record per worker process (`_id` its Temporal identity), written by that process only, so
 * FerretDB's non-atomic updates do not matter. Readers compare successive `beat` values on their own
 * clock, so the worker's and the reader's clocks need not agree; only a record seen for the first time
 * is judged by its `at`.
 */
import type { Db } from 'mongodb';
import type { Logger } from '../base/log';

export const WORKER_HEARTBEATS = 'worker_heartbeats';

/** A worker is counted gone after this many heartbeat intervals without a new beat. */
export const MISSED_BEATS = 5;

/** Records older than this are removed when a worker starts (dead workers' records). */
const FORGET_AFTER_MS = 24 * 60 * 60 * 1000;

export interface HeartbeatRecord {
  _id: string;
  task_queue: string;
  /** Grows by one at every write. */
  beat: number;
  /** Writer's clock. */
  at: Date;
  interval_ms: number;
}

export interface Heartbeat {
  /** Removes this worker's record (a graceful stop is noticed at once) and stops writing. */
  stop(): Promise<void>;
}

/**
 * Writes this worker's record now and then every `intervalMs` while `alive()` says so (the worker
 * polls); a failed write (database away) is retried at the next interval.
 */
export async function startHeartbeat(options: {
  db: Db;
  identity: string;
  taskQueue: string;
  intervalMs: number;
  alive: () => boolean;
  log: Logger;
}): Promise<Heartbeat> {
  const records = options.db.collection<HeartbeatRecord>(WORKER_HEARTBEATS);
  // Housekeeping only: tried again at the next start if the database is away now.
  await records.deleteMany({ task_queue: options.taskQueue, at: { $lt: new Date(Date.now() - FORGET_AFTER_MS) } }).catch(() => undefined);
  let beat = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();
  let failing = false;
  const write = async (): Promise<void> => {
    if (!options.alive()) return;
    beat += 1;
    try {
      await records.replaceOne(
        { _id: options.identity },
        { task_queue: options.taskQueue, beat, at: new Date(), interval_ms: options.intervalMs },
        { upsert: true },
      );
      if (failing) options.log.info('worker heartbeat recorded again');
      failing = false;
    } catch (error) {
      if (!failing) options.log.warn('worker heartbeat not recorded', { error: (error as Error).message });
      failing = true;
    }
  };
  const tick = (): void => {
    writing = write().finally(() => {
      if (!stopped) timer = setTimeout(tick, options.intervalMs);
    });
  };
  tick();
  await writing;
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await writing;
      await records.deleteOne({ _id: options.identity }).catch(() => undefined);
    },
  };
}

/** Reads the records of a task queue and tells which workers are alive, by how their beats move. */
export class LivenessReader {
  /** Identity → the last beat seen and when (reader's clock) it was written, as near as known. */
  private readonly seen = new Map<string, { beat: number; since: number }>();
  /** When the records were last read (reader's clock). */
  private lastRead = -Infinity;

  constructor(
    private readonly db: Db,
    private readonly taskQueue: string,
    private readonly intervalMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Identities of the workers whose record changed within MISSED_BEATS intervals. */
  async alive(timeoutMs: number): Promise<Set<string>> {
    const records = await this.db
      .collection<HeartbeatRecord>(WORKER_HEARTBEATS)
      .find({ task_queue: this.taskQueue }, { timeoutMS: timeoutMs, projection: { _id: 1, beat: 1, at: 1, interval_ms: 1 } })
      .toArray();
    const now = this.now();
    const alive = new Set<string>();
    const present = new Set<string>();
    for (const record of records) {
      present.add(record._id);
      const staleAfter = MISSED_BEATS * Math.max(this.intervalMs, record.interval_ms);
      const previous = this.seen.get(record._id);
      const written = Math.min(now, record.at.getTime());
      // A new beat was written after the previous read, whatever the writer's clock says; a record
      // seen for the first time is judged by its `at` alone.
      const since = previous?.beat === record.beat ? previous.since : previous ? Math.max(written, this.lastRead) : written;
      this.seen.set(record._id, { beat: record.beat, since });
      if (now - since <= staleAfter) alive.add(record._id);
    }
    for (const identity of this.seen.keys()) if (!present.has(identity)) this.seen.delete(identity);
    this.lastRead = now;
    return alive;
  }
}
