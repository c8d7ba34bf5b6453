/**
 * The one counting semaphore: a first-come queue where a freed turn passes straight to the next
 * waiter, so a newcomer never overtakes the queue. Used for per-crawl and per-run page limits and the
 * worker's Batch limit; a waiter may also give up at a deadline or on abort, and `close` fails them all.
 * (The browser pool's pages are shared per account, served in turn: engine/browser/slots.ts.)
 */

export type Release = () => void;

export type Turn = { ok: true; release: Release } | { ok: false; reason: 'timeout' | 'aborted' | 'closed' };

interface Waiter {
  grant(): void;
  fail(reason: 'timeout' | 'aborted' | 'closed'): void;
}

export class Semaphore {
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

  get idle(): boolean {
    return this.used === 0 && this.queue.length === 0;
  }

  /** Waits for a turn; call the returned function when done (calling it twice frees one turn). */
  async acquire(): Promise<Release> {
    const turn = await this.take();
    if (!turn.ok) throw new Error(`no turn: ${turn.reason}`);
    return turn.release;
  }

  /** Waits for a turn until `deadline` (epoch ms) or `signal` aborts; says why when none came. */
  take(options: { deadline?: number; signal?: AbortSignal } = {}): Promise<Turn> {
    const { deadline, signal } = options;
    if (this.closed) return Promise.resolve({ ok: false, reason: 'closed' });
    if (signal?.aborted) return Promise.resolve({ ok: false, reason: 'aborted' });
    if (this.used < this.capacity && this.queue.length === 0) {
      this.used++;
      return Promise.resolve({ ok: true, release: this.releaser() });
    }
    return new Promise((resolve) => {
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
          resolve({ ok: true, release: this.releaser() });
        },
        fail: (reason) => {
          cleanup();
          resolve({ ok: false, reason });
        },
      };
      const onAbort = (): void => waiter.fail('aborted');
      signal?.addEventListener('abort', onAbort, { once: true });
      if (deadline !== undefined) timer = setTimeout(() => waiter.fail('timeout'), Math.max(0, deadline - Date.now()));
      this.queue.push(waiter);
    });
  }

  /** Fails every waiter and every later turn. */
  close(): void {
    this.closed = true;
    for (const waiter of [...this.queue]) waiter.fail('closed');
  }

  private releaser(): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.queue[0];
      if (next) next.grant();
      else this.used--;
    };
  }
}
