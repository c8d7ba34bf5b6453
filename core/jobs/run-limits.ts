/**
 * Each job run's concurrency window in this process: the slices of one run (a crawl, a Batch run)
 * running here share one semaphore, made when the first arrives and forgotten when the last leaves.
 */
import { Semaphore } from '../../base/semaphore';

export interface RunLimit {
  limit: Semaphore;
  /** Called once by each taker when its slice ends. */
  done(): void;
}

export class RunLimits {
  private readonly limits = new Map<string, { limit: Semaphore; users: number }>();

  /** The run's window (of `concurrency`, fixed by its first taker), shared with its other slices here. */
  take(runId: string, concurrency: number): RunLimit {
    let entry = this.limits.get(runId);
    if (!entry) {
      entry = { limit: new Semaphore(concurrency), users: 0 };
      this.limits.set(runId, entry);
    }
    entry.users++;
    const current = entry;
    return {
      limit: current.limit,
      done: () => {
        current.users--;
        if (current.users === 0 && this.limits.get(runId) === current) this.limits.delete(runId);
      },
    };
  }

  /** Runs with a window here now. */
  get size(): number {
    return this.limits.size;
  }
}
