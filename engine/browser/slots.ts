/**
 * The cap on pages open at once: the one semaphore (base/semaphore.ts), whose refusals become the
 * render failures a waiter gives up with: `timeout` at its deadline, `aborted` when its signal aborts,
 * `pool_closed` when the pool closes.
 */
import { Semaphore } from '../../base/semaphore';
import { stopWith } from './types';

export class Slots {
  private readonly semaphore: Semaphore;

  constructor(capacity: number) {
    this.semaphore = new Semaphore(capacity);
  }

  get inUse(): number {
    return this.semaphore.inUse;
  }

  get waiting(): number {
    return this.semaphore.waiting;
  }

  /** Resolves with a release function once a slot is free; rejects with the render's failure otherwise. */
  async acquire(deadline?: number, signal?: AbortSignal): Promise<() => void> {
    const turn = await this.semaphore.take({ ...(deadline !== undefined ? { deadline } : {}), ...(signal ? { signal } : {}) });
    if (turn.ok) return turn.release;
    if (turn.reason === 'closed') throw stopWith('pool_closed', 'the browser pool is shutting down');
    if (turn.reason === 'aborted') throw stopWith('aborted', 'the request was cancelled');
    throw stopWith('timeout', 'no browser page became free in time');
  }

  /** Fails every waiter and every later `acquire`. */
  close(): void {
    this.semaphore.close();
  }
}
