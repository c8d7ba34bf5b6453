/**
 * Whether this API process can do its work: the database takes a write, Temporal answers, and a live
 * worker polls the task queue. `/readyz` reports it; the endpoints that start work refuse with 503 while
 * no worker is alive (work accepted then would not move).
 *
 * The database check pings and writes (one small document, shared by every API process): a store
 * whose disk is full still answers pings and reads, and only its refusal of the write tells. Workers prove they are alive by writing
 * their heartbeat to that same database, so while it refuses writes their records go stale however
 * well they run: the worker check then says it cannot tell, and the database is named as what fails.
 *
 * Every check runs concurrently under PROBE_TIMEOUT_MS, so a report never takes much longer than
 * that whatever is down, and a report is reused for CACHE_MS, so `/readyz` polled by many load
 * balancers costs the components at most a few look-ups a second.
 *
 * The worker check asks Temporal for the task queue's pollers (DescribeTaskQueue) and the liveness
 * records (liveness.ts), and counts a worker only when both name it. Measured on the dev server
 * (bench/pollers.ts): a healthy worker's poller entry is refreshed only when a long poll starts, so
 * its age reaches 60 s between polls; after a SIGKILL the entry stays, unchanged, until 5 minutes
 * after its last poll (dropped 283 s after the kill). The poller list alone could tell a dead worker
 * no sooner than about 70 s, and by default says it is there for 5 minutes; the liveness records go
 * stale within MISSED_BEATS × WORKER_HEARTBEAT_MS (5 s by default).
 */
import type { Config } from '../base/config';
import type { Database } from '../base/db';
import { LivenessReader } from './liveness';
import type { TemporalHandle } from '../base/temporal';
import { isStorageFailure, serviceUnavailable, type Dependency } from '../base/unavailable';

/** Longest a single check may take; `/readyz` must answer within a second. */
export const PROBE_TIMEOUT_MS = 800;
/** How long a report is reused. */
export const CACHE_MS = 1_000;

// temporal.api.enums.v1: TASK_QUEUE_KIND_NORMAL, TASK_QUEUE_TYPE_WORKFLOW.
const TASK_QUEUE_KIND_NORMAL = 1;
const TASK_QUEUE_TYPE_WORKFLOW = 1;

/** Where the database check writes: one document every API process rewrites. */
export const READINESS_PROBES = 'readiness_probes';

/** `down`: unreachable or refusing writes, or (worker) positively none alive; `unknown`: the worker check could not look. */
export type CheckState = 'ok' | 'down' | 'unknown';

export interface Check {
  state: CheckState;
  /** `ok`, or what is wrong. */
  detail: string;
}

export type Checks = Record<Dependency, Check>;

export interface ReadinessReport {
  ready: boolean;
  checks: Checks;
  /** Workers of the task queue whose liveness records keep changing; undefined when unreadable. */
  workersAlive: number | undefined;
}

export interface ReadinessOptions {
  db: Database;
  temporal: TemporalHandle;
  namespace: string;
  taskQueue: string;
  heartbeatMs: number;
  now?: () => number;
}

/** `work`, or a rejection after `ms` (the work's own deadline ends it soon after). */
async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const message = (error: unknown): string => ((error as Error).message ?? String(error)).slice(0, 300);

const OK: Check = { state: 'ok', detail: 'ok' };
const unreachable = (error: unknown): Check => ({ state: 'down', detail: `unreachable: ${message(error)}` });

/** The readiness of a process from its configuration and clients. */
export const createReadiness = (
  config: Pick<Config, 'temporalNamespace' | 'temporalTaskQueue' | 'workerHeartbeatMs'>,
  db: Database,
  temporal: TemporalHandle,
): Readiness => new Readiness({ db, temporal, namespace: config.temporalNamespace, taskQueue: config.temporalTaskQueue, heartbeatMs: config.workerHeartbeatMs });

export class Readiness {
  private cached: { at: number; report: ReadinessReport } | undefined;
  private inFlight: Promise<ReadinessReport> | undefined;
  private readonly liveness: LivenessReader;
  private readonly now: () => number;

  constructor(private readonly options: ReadinessOptions) {
    this.now = options.now ?? Date.now;
    this.liveness = new LivenessReader(options.db.db, options.taskQueue, options.heartbeatMs, this.now);
  }

  /** The newest report, probed again when older than CACHE_MS; concurrent callers share one probe. */
  async report(fresh = false): Promise<ReadinessReport> {
    if (!fresh && this.cached && this.now() - this.cached.at < CACHE_MS) return this.cached.report;
    this.inFlight ??= this.probe().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  /**
   * Refuses with 503 `service_unavailable` while no worker is alive: work accepted now would sit in
   * Temporal until one comes back, and the caller is better told to retry. Only a positive finding
   * refuses, and only on a fresh look (a worker may have started within the cached second): when the
   * database or Temporal cannot be asked (down, or slow under load), the request goes on, and its own
   * calls to them fail within DATABASE_TIMEOUT_MS / TEMPORAL_TIMEOUT_MS (503 too) if they are really
   * away. A worker alive whose first poll Temporal does not list yet (it just started) is let through:
   * its work moves as soon as the poll arrives.
   */
  async requireWorker(): Promise<void> {
    const none = (report: ReadinessReport): boolean => report.checks.worker.state === 'down' && report.workersAlive === 0;
    if (none(await this.report()) && none(await this.report(true))) throw serviceUnavailable('worker');
  }

  private async probe(): Promise<ReadinessReport> {
    const started = this.now();
    const [database, temporal, worker] = await Promise.all([
      this.checkDatabase(),
      this.checkTemporal(),
      this.checkWorker(),
    ]);
    // Stale heartbeats prove nothing while the database that keeps them is failing.
    const blind = database.state === 'down' && worker.check.state === 'down';
    const workerCheck: Check = blind ? { state: 'unknown', detail: 'unknown: workers record their heartbeats in the database, which is failing' } : worker.check;
    const checks: Checks = { database, temporal, worker: workerCheck };
    const report = { ready: Object.values(checks).every((check) => check.state === 'ok'), checks, workersAlive: blind ? undefined : worker.alive };
    this.cached = { at: started, report };
    return report;
  }

  private async checkDatabase(): Promise<Check> {
    const probes = this.options.db.db.collection<{ _id: string; at: Date }>(READINESS_PROBES);
    const [ping, write] = await Promise.allSettled([
      within(PROBE_TIMEOUT_MS, this.options.db.ping(PROBE_TIMEOUT_MS)),
      within(PROBE_TIMEOUT_MS, probes.replaceOne({ _id: 'api' }, { at: new Date(this.now()) }, { upsert: true, timeoutMS: PROBE_TIMEOUT_MS })),
    ]);
    if (ping.status === 'rejected') return unreachable(ping.reason);
    // Only the store's own refusal counts: a write slower than the probe (a busy disk) is no outage,
    // and two processes creating the document at once means the other's write landed.
    if (write.status === 'rejected' && isStorageFailure(write.reason)) return { state: 'down', detail: `refuses writes (its disk is full or failing): ${message(write.reason)}` };
    return OK;
  }

  private async checkTemporal(): Promise<Check> {
    try {
      await within(PROBE_TIMEOUT_MS, this.options.temporal.ping(PROBE_TIMEOUT_MS));
      return OK;
    } catch (error) {
      return unreachable(error);
    }
  }

  private async checkWorker(): Promise<{ check: Check; alive: number | undefined }> {
    const { temporal, namespace, taskQueue } = this.options;
    const deadline = this.now() + PROBE_TIMEOUT_MS;
    let pollers: Set<string>;
    let alive: Set<string>;
    try {
      [pollers, alive] = await within(
        PROBE_TIMEOUT_MS,
        Promise.all([
          temporal.connection
            .withDeadline(deadline, () =>
              temporal.client.workflowService.describeTaskQueue({
                namespace,
                taskQueue: { name: taskQueue, kind: TASK_QUEUE_KIND_NORMAL },
                taskQueueType: TASK_QUEUE_TYPE_WORKFLOW,
              }),
            )
            .then(({ pollers: list }) => new Set((list ?? []).map((poller) => poller.identity ?? ''))),
          this.liveness.alive(PROBE_TIMEOUT_MS),
        ]),
      );
    } catch (error) {
      // Not known while what records the workers is unreachable (the other checks say which).
      return { check: { state: 'unknown', detail: `unknown: ${message(error)}` }, alive: undefined };
    }
    const live = [...alive].filter((identity) => pollers.has(identity));
    if (live.length > 0) return { check: OK, alive: alive.size };
    return {
      check: {
        state: 'down',
        detail:
          alive.size === 0
            ? `unreachable: no live worker (none recorded a heartbeat lately) polls task queue "${taskQueue}"`
            : `unreachable: Temporal lists none of the workers alive (${[...alive].join(', ')}) as polling task queue "${taskQueue}"`,
      },
      alive: alive.size,
    };
  }

  /** The checks as `/readyz` shows them: `ok` or what is wrong, per component. */
  static present(checks: Checks): Record<Dependency, string> {
    return { database: checks.database.detail, temporal: checks.temporal.detail, worker: checks.worker.detail };
  }
}
