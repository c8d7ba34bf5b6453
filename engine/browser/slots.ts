/**
 * A counting semaphore with a first-come queue: the cap on pages open at once. A waiter gives up at
 * its deadline (`timeout`), when its signal aborts (`aborted`) or when the pool closes (`pool_closed`).
 */
import { stopWith } from './types';

interface Waiter {
  grant(): void;
  fail(error: Error): void;
}

export class Slots {
  private used = 0;
  private readonly queue: Waiter[] = [];
  private closed = false;

  constructor(private readonly capacity: number) {}

  get inUse(): number {
    return this.used;
  }

  get waiting(): number {
    return this.queue.length;
  }

  /** Resolves with a release function once a slot is free. */
  acquire(deadline?: number, signal?: AbortSignal): Promise<() => void> {
    if (this.closed) return Promise.reject(stopWith('pool_closed', 'the browser pool is shutting down'));
    if (signal?.aborted) return Promise.reject(stopWith('aborted', 'the request was cancelled'));
    if (this.used < this.capacity && this.queue.length === 0) {
      this.used++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const cleanup = (): void => {
        if (timer) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const index = this.queue.indexOf(waiter);
        if (index >= 0) this.queue.splice(index, 1);
      };
      const waiter: Waiter = {
        grant: () => {
          cleanup();
          resolve(this.releaser());
        },
        fail: (error) => {
          cleanup();
          reject(error);
        },
      };
      const onAbort = (): void => waiter.fail(stopWith('aborted', 'the request was cancelled'));
      signal?.addEventListener('abort', onAbort, { once: true });
      if (deadline !== undefined) {
        timer = setTimeout(() => waiter.fail(stopWith('timeout', 'no browser page became free in time')), Math.max(0, deadline - Date.now()));
      }
      this.queue.push(waiter);
    });
  }

  /** Fails every waiter and every later `acquire`. */
  close(): void {
    this.closed = true;
    for (const waiter of [...this.queue]) waiter.fail(stopWith('pool_closed', 'the browser pool is shutting down'));
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.queue[0];
      // The slot passes straight to the next waiter, so a newcomer cannot overtake the queue.
      if (next) next.grant();
      else this.used--;
    };
  }
}
