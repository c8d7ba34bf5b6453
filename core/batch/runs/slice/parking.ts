/**
 * A slice's tasks and the slots they share with others: the run's window and the worker's Batch
 * concurrency. A task holds them while it fetches, never while it waits at its host (a pause after
 * 429/503, a Crawl-delay, a rate, a full host) or between its attempts: each wait runs inside `park`,
 * which gives the slots back and takes them again after, so another account's tasks at a healthy host
 * go on meanwhile.
 *
 * While tasks wait, the slice watches over them once a second:
 * - the run was stopped (or its job deleted): their waits end, and they stay pending, unbilled;
 * - every task of the slice has waited for `yieldAfterMs`: the slice gives up its turn as a pause does
 *   (`onYield`: the part is stored with those tasks pending, the workflow schedules the next part a
 *   little later), so a slice held up at a paused host does not keep a worker's activity slot either.
 */
import type { Park } from '../../../../engine';
import type { RunControl } from '../run-control';

const WATCH_MS = 1_000;

/** A limit a task takes a turn of (the run's lease, the worker's slot); the returned function gives it back. */
export interface SliceLimit {
  acquire(signal?: AbortSignal): Promise<() => void>;
}

export interface TaskTurn {
  /** Aborted when the task's wait was given up (the run stopped, or the slice yields): the task stays pending. */
  signal: AbortSignal;
  park: Park;
  /** The task is over: its slots go back. */
  end(): void;
}

export class SliceParking {
  private active = 0;
  private readonly parked = new Set<AbortController>();
  /** Since when every active task waits (0: not all of them). */
  private allParkedSince = 0;
  private watch: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly options: {
      limits: readonly SliceLimit[];
      runControl: () => Promise<RunControl>;
      yieldAfterMs: number;
      onYield: () => void;
      now?: () => number;
    },
  ) {}

  /**
   * Takes the slots for a task (in order: the run's lease, then the worker's slot); `signal` gives up
   * waiting for them (then, and after a wait at the host, nothing is held and the error is thrown).
   */
  async begin(signal?: AbortSignal): Promise<TaskTurn> {
    const held: Array<() => void> = [];
    const release = (): void => {
      for (const free of held.splice(0).reverse()) free();
    };
    const acquire = async (): Promise<void> => {
      try {
        for (const limit of this.options.limits) held.push(await limit.acquire(signal));
      } catch (error) {
        release();
        throw error;
      }
    };
    await acquire();
    this.active++;
    this.allParkedSince = 0;
    const giveUp = new AbortController();
    return {
      signal: giveUp.signal,
      park: async (wait) => {
        release();
        this.parked.add(giveUp);
        this.noteParked();
        try {
          return await wait();
        } finally {
          this.parked.delete(giveUp);
          this.allParkedSince = 0;
          await acquire();
        }
      },
      end: () => {
        this.active--;
        release();
        this.noteParked();
      },
    };
  }

  /** Stops watching (the slice is over). */
  close(): void {
    if (this.watch) clearInterval(this.watch);
    this.watch = undefined;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private noteParked(): void {
    if (this.parked.size > 0 && this.parked.size >= this.active) this.allParkedSince ||= this.now();
    if (this.parked.size > 0 && !this.watch) {
      this.watch = setInterval(() => void this.look().catch(() => undefined), WATCH_MS);
    } else if (this.parked.size === 0) {
      this.close();
    }
  }

  private async look(): Promise<void> {
    if (this.parked.size === 0) return;
    if ((await this.options.runControl()) === 'stop') return this.giveUpAll();
    if (this.allParkedSince > 0 && this.now() - this.allParkedSince >= this.options.yieldAfterMs) {
      this.options.onYield();
      this.giveUpAll();
    }
  }

  private giveUpAll(): void {
    for (const waiting of this.parked) waiting.abort();
  }
}
