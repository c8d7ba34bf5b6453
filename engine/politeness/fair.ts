/**
 * Turns at one host inside one process: at most `limit` requests hold a turn at once, and when they
 * are all taken the next turn goes to the accounts waiting in rotation, so an account with a hundred
 * pages queued and one with a single page alternate instead of the first taking them all.
 */
interface Waiter {
  resolve(): void;
  reject(error: Error): void;
}

/** A wait for a turn that ran past its `timeoutMs`. */
export class TurnTimeout extends Error {
  constructor() {
    super('no turn came in time');
  }
}

export class FairTurns {
  private active = 0;
  /** Waiters per account, in the order accounts first waited. */
  private readonly queues = new Map<string, Waiter[]>();

  constructor(private limit: number) {}

  get idle(): boolean {
    return this.active === 0 && this.queues.size === 0;
  }

  /** A turn is free now: `take` would not wait. */
  get free(): boolean {
    return this.active < this.limit && this.queues.size === 0;
  }

  setLimit(limit: number): void {
    this.limit = limit;
    this.wake();
  }

  /** A turn if one is free now (no promise, no wait: the common case of a host that is not full), else undefined. */
  tryTake(): (() => void) | undefined {
    if (!this.free) return undefined;
    this.active++;
    return this.release();
  }

  /**
   * Waits for a turn; the returned function gives it back (once). `timeoutMs`: past it the wait ends
   * with a TurnTimeout (a timer of the wait's own, so the caller builds no signal for its deadline).
   */
  async take(account: string, signal?: AbortSignal, timeoutMs?: number): Promise<() => void> {
    if (signal?.aborted) throw new Error('aborted');
    const now = this.tryTake();
    if (now) return now;
    await new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const leave = (error: Error): void => {
        const list = this.queues.get(account);
        const index = list?.indexOf(waiter) ?? -1;
        if (!list || index < 0) return;
        list.splice(index, 1);
        if (list.length === 0) this.queues.delete(account);
        if (timer) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        reject(error);
      };
      const onAbort = (): void => leave(new Error('aborted'));
      const waiter: Waiter = {
        resolve: () => {
          if (timer) clearTimeout(timer);
          // The caller's signal may outlive this wait (a crawl's): it keeps no listener of it.
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        reject,
      };
      const queue = this.queues.get(account) ?? [];
      queue.push(waiter);
      this.queues.set(account, queue);
      if (timeoutMs !== undefined) timer = setTimeout(() => leave(new TurnTimeout()), Math.max(0, timeoutMs));
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    return this.release();
  }

  private release(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      this.wake();
    };
  }

  private wake(): void {
    while (this.active < this.limit && this.queues.size > 0) {
      const [account, queue] = this.queues.entries().next().value as [string, Waiter[]];
      const waiter = queue.shift()!;
      // The account goes to the back of the rotation.
      this.queues.delete(account);
      if (queue.length > 0) this.queues.set(account, queue);
      this.active++;
      waiter.resolve();
    }
  }
}
