/**
 * A Batch run's concurrency across every worker: a task in flight holds one of the run's `concurrency`
 * leases, documents of `run_leases` whose `_id` is `<run>|<n>` (n < concurrency), taken by unique insert
 * like the host gate's leases (core/politeness/store.ts), so the run never has more tasks in flight
 * than its plan's concurrency however many workers run its slices.
 *
 * Per worker and run, one window hands the leases the worker holds to its tasks in memory:
 *
 *   task wants a lease ─ insert a free one (one read, one insert), else wait in line
 *   task ends ─ a task of the run waits here ─> hand it the lease (no database work)
 *            └ none ─> delete the lease (another worker's task may take it)
 *
 * While tasks wait, one poll per window and run looks for free leases (starting at LEASE_POLL_MS,
 * backing off to LEASE_POLL_MAX_MS); leases whose holder died expire LEASE_MS after their last renewal
 * and are deleted by the next poll. Held leases are renewed every third of LEASE_MS (one write for all
 * of a window's). A run's tasks in one worker may keep its leases while they have work, so another
 * worker's slices of the run wait until those tasks run out: the run's pace is the same, and the
 * waiting worker's own slots (taken after the lease) stay free for other runs meanwhile.
 */
import { randomUUID } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey, type IndexRegistration } from '../../base/db';

export interface RunLeaseDoc {
  _id: string;
  run_id: string;
  /** The window (worker and run) holding it. */
  token: string;
  expires_at: Date;
}

export const RUN_LEASE_INDEXES: IndexRegistration = {
  run_leases: [{ key: { expires_at: 1 }, name: 'expires_at' }],
};

export const LEASE_MS = 60_000;
const LEASE_POLL_MS = 25;
const LEASE_POLL_MAX_MS = 400;
const SWEEP_EVERY_MS = 60_000;

/** What a task holds: call it once when the task ends. */
export type LeaseRelease = () => void;

interface Waiter {
  grant(id: string): void;
  fail(error: Error): void;
}

const aborted = (): Error => new Error('aborted');

/** One run's leases in this worker. */
class RunWindow {
  readonly token = randomUUID();
  /** Leases held by this window, each by a task here. */
  private readonly held = new Set<string>();
  private readonly waiters: Waiter[] = [];
  private polling = false;
  private renewal: NodeJS.Timeout | undefined;
  /** Slices of the run using the window here. */
  users = 0;

  constructor(
    private readonly leases: Collection<RunLeaseDoc>,
    readonly runId: string,
    private readonly size: number,
    private readonly now: () => number,
  ) {}

  get unused(): boolean {
    return this.users === 0 && this.held.size === 0 && this.waiters.length === 0;
  }

  /** Waits for one of the run's leases; the returned function gives it back. */
  async acquire(signal?: AbortSignal): Promise<LeaseRelease> {
    if (signal?.aborted) throw aborted();
    const id = (this.waiters.length === 0 ? await this.takeFree() : undefined) ?? (await this.wait(signal));
    return this.releaser(id);
  }

  private releaser(id: string): LeaseRelease {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (next) return next.grant(id);
      this.held.delete(id);
      this.stopRenewingIfIdle();
      void this.leases.deleteOne({ _id: id, token: this.token }).catch(() => undefined);
    };
  }

  private wait(signal?: AbortSignal): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const onAbort = (): void => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        reject(aborted());
      };
      const waiter: Waiter = {
        grant: (id) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(id);
        },
        fail: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
      void this.poll();
    });
  }

  /** Looks for free leases while tasks wait here, backing off while none comes. */
  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      let pause = LEASE_POLL_MS;
      while (this.waiters.length > 0) {
        let id: string | undefined;
        try {
          id = await this.takeFree(true);
        } catch (error) {
          for (const waiter of this.waiters.splice(0)) waiter.fail(error as Error);
          return;
        }
        if (id !== undefined) {
          const waiter = this.waiters.shift();
          if (waiter) waiter.grant(id);
          else this.releaser(id)();
          pause = LEASE_POLL_MS;
          continue;
        }
        await new Promise((resolve) => setTimeout(resolve, pause + Math.random() * pause));
        pause = Math.min(LEASE_POLL_MAX_MS, pause * 2);
      }
    } finally {
      this.polling = false;
    }
  }

  /** Inserts one of the run's free leases for this window; undefined when every one is held. */
  private async takeFree(expire = false): Promise<string | undefined> {
    const ids = Array.from({ length: this.size }, (_, n) => `${this.runId}|${n}`);
    const now = this.now();
    if (expire) await this.leases.deleteMany({ _id: { $in: ids }, expires_at: { $lt: new Date(now) } });
    const taken = new Set((await this.leases.find({ _id: { $in: ids } }, { projection: { _id: 1 } }).toArray()).map((doc) => doc._id));
    const free = ids.filter((id) => !taken.has(id));
    const first = Math.floor(Math.random() * Math.max(1, free.length));
    for (let step = 0; step < free.length; step++) {
      const id = free[(first + step) % free.length] as string;
      try {
        await this.leases.insertOne({ _id: id, run_id: this.runId, token: this.token, expires_at: new Date(now + LEASE_MS) });
      } catch (error) {
        if (isDuplicateKey(error)) continue;
        throw error;
      }
      this.held.add(id);
      this.startRenewing();
      return id;
    }
    return undefined;
  }

  private startRenewing(): void {
    if (this.renewal) return;
    this.renewal = setInterval(() => {
      const ids = [...this.held];
      if (ids.length === 0) return;
      void this.leases.updateMany({ _id: { $in: ids }, token: this.token }, { $set: { expires_at: new Date(this.now() + LEASE_MS) } }).catch(() => undefined);
    }, LEASE_MS / 3);
    this.renewal.unref();
  }

  private stopRenewingIfIdle(): void {
    if (this.held.size > 0 || !this.renewal) return;
    clearInterval(this.renewal);
    this.renewal = undefined;
  }
}

export interface RunLease {
  /** Waits for one of the run's leases (aborted with `signal`); the returned function gives it back. */
  acquire(signal?: AbortSignal): Promise<LeaseRelease>;
  /** Called once by each taker when its slice ends. */
  done(): void;
}

/** The Batch runs' lease windows of this worker. */
export class RunLeases {
  private readonly windows = new Map<string, RunWindow>();
  private readonly leases: Collection<RunLeaseDoc>;
  private lastSweep = 0;

  constructor(
    db: Db,
    private readonly now: () => number = Date.now,
  ) {
    this.leases = db.collection<RunLeaseDoc>('run_leases');
  }

  /** The run's window here (its size, the run's concurrency, fixed by its first taker), shared with its other slices. */
  take(runId: string, concurrency: number): RunLease {
    this.sweep();
    let window = this.windows.get(runId);
    if (!window) {
      window = new RunWindow(this.leases, runId, Math.max(1, concurrency), this.now);
      this.windows.set(runId, window);
    }
    window.users++;
    const current = window;
    return {
      acquire: (signal) => current.acquire(signal),
      done: () => {
        current.users--;
        if (current.unused && this.windows.get(runId) === current) this.windows.delete(runId);
      },
    };
  }

  /** Runs with a window here now. */
  get size(): number {
    return this.windows.size;
  }

  /** Deletes leases long expired (a worker died holding them and no poll of their run came since). */
  private sweep(): void {
    const now = this.now();
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    void this.leases.deleteMany({ expires_at: { $lt: new Date(now - LEASE_MS) } }).catch(() => undefined);
  }
}
