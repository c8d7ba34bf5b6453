/**
 * The pool's pages, shared between owners (the callers' accounts, by reuse key): at most `capacity`
 * open at once, and at most an owner's `share` of them held by that owner's renders. A freed page
 * goes to the owners waiting in turn: the owner served longest ago first, an owner at its share
 * skipped (it never holds up another), each owner's own renders first come, first served. So one
 * account with a queue of renders that never end takes its share and no more, and an account with a
 * single render gets the next free page however long the other's queue is.
 *
 * A waiter gives up with the render's failure: `timeout` at its deadline, `aborted` when its signal
 * aborts, `pool_closed` when the pool closes.
 */
import { stopWith } from './types';

export interface SlotRequest {
  /** Whose render this is; renders without an owner share one queue and no share but the pool's. */
  owner?: string;
  /** Pages the owner's renders may hold at once (cut to 1..capacity); unset: the whole pool. */
  share?: number;
  /** Epoch milliseconds after which waiting gives up. */
  deadline?: number;
  signal?: AbortSignal;
}

interface Waiter {
  share: number;
  grant(release: () => void): void;
}

/** The key of renders without an owner (no account's key is empty). */
const NOBODY = '';

export class Slots {
  private used = 0;
  /** Pages held now, by owner. */
  private readonly held = new Map<string, number>();
  /** Waiters by owner, owners in the order of their turn (a served owner goes to the back). */
  private readonly queues = new Map<string, Waiter[]>();
  private queued = 0;
  private closed = false;
  private readonly closers = new Set<() => void>();

  constructor(private readonly capacity: number) {}

  get inUse(): number {
    return this.used;
  }

  get waiting(): number {
    return this.queued;
  }

  /** Pages `owner`'s renders hold now. */
  heldBy(owner: string | undefined): number {
    return this.held.get(owner ?? NOBODY) ?? 0;
  }

  /** Resolves with a release function once a page is the request's; rejects with the render's failure otherwise. */
  acquire(request: SlotRequest = {}): Promise<() => void> {
    const { deadline, signal } = request;
    const owner = request.owner ?? NOBODY;
    const share = Math.max(1, Math.min(this.capacity, Math.floor(request.share ?? this.capacity)));
    if (this.closed) return Promise.reject(stopWith('pool_closed', 'the browser pool is shutting down'));
    if (signal?.aborted) return Promise.reject(stopWith('aborted', 'the request was cancelled'));
    // An owner with renders queued keeps their order: a newcomer of its own goes behind them.
    if (!this.queues.has(owner) && this.free(owner, share)) return Promise.resolve(this.take(owner));
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const leave = (): void => {
        if (timer) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.closers.delete(onClose);
        const queue = this.queues.get(owner);
        const at = queue?.indexOf(waiter) ?? -1;
        if (!queue || at < 0) return;
        queue.splice(at, 1);
        this.queued--;
        if (queue.length === 0) this.queues.delete(owner);
      };
      const waiter: Waiter = {
        share,
        grant: (release) => {
          leave();
          resolve(release);
        },
      };
      const fail = (error: Error): void => {
        leave();
        reject(error);
      };
      const onAbort = (): void => fail(stopWith('aborted', 'the request was cancelled'));
      const onClose = (): void => fail(stopWith('pool_closed', 'the browser pool is shutting down'));
      signal?.addEventListener('abort', onAbort, { once: true });
      this.closers.add(onClose);
      if (deadline !== undefined) timer = setTimeout(() => fail(stopWith('timeout', 'no browser page became free in time')), Math.max(0, deadline - Date.now()));
      const queue = this.queues.get(owner) ?? [];
      queue.push(waiter);
      this.queues.set(owner, queue);
      this.queued++;
    });
  }

  /** Fails every waiter and every later `acquire`. */
  close(): void {
    this.closed = true;
    for (const close of [...this.closers]) close();
  }

  private free(owner: string, share: number): boolean {
    return this.used < this.capacity && this.heldBy(owner) < share;
  }

  private take(owner: string): () => void {
    this.used++;
    this.held.set(owner, this.heldBy(owner) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used--;
      const left = this.heldBy(owner) - 1;
      if (left > 0) this.held.set(owner, left);
      else this.held.delete(owner);
      this.wake();
    };
  }

  /** Hands free pages to the waiting owners in turn, skipping those at their share. */
  private wake(): void {
    while (this.used < this.capacity) {
      let next: [string, Waiter] | undefined;
      for (const [owner, queue] of this.queues) {
        const head = queue[0];
        if (head && this.heldBy(owner) < head.share) {
          next = [owner, head];
          break;
        }
      }
      if (!next) return;
      const [owner, waiter] = next;
      // To the back of the turn: the other owners waiting come first next time.
      const queue = this.queues.get(owner) ?? [];
      this.queues.delete(owner);
      this.queues.set(owner, queue);
      waiter.grant(this.take(owner));
    }
  }
}
