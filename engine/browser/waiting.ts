/**
 * Contexts readied for the next render with the same reuse key (pool.ts), by key, oldest first. Each
 * waits WAIT_MS at most and serves REUSE_LIMIT renders in all; a page whose renderer crashed never
 * waits again. `O` is the browser a context belongs to: a context is handed back only to a render on
 * that same browser.
 */
import type { BrowserContext, Page } from 'playwright-core';
import type { Made } from './contexts';

const WAIT_MS = 30_000;
const REUSE_LIMIT = 50;

interface Entry<O> {
  owner: O;
  made: Made<unknown>;
  timer: NodeJS.Timeout;
}

export class WaitingContexts<O> {
  private readonly byKey = new Map<string, Array<Entry<O>>>();
  private count = 0;
  private readonly uses = new WeakMap<BrowserContext, number>();
  private readonly crashed = new WeakSet<Page>();
  readonly counts = { recycled: 0, reused: 0 };

  /** `close` closes a context that stops waiting without being handed out. */
  constructor(private readonly close: (made: Made<unknown>) => void) {}

  get size(): number {
    return this.count;
  }

  /** A context of `owner` waiting with this key, if one is usable; unusable ones met on the way are closed. */
  take(owner: O, key: string): Made<unknown> | undefined {
    const list = this.byKey.get(key) ?? [];
    for (let entry = list.shift(); entry; entry = list.shift()) {
      this.count--;
      clearTimeout(entry.timer);
      if (entry.owner === owner && !entry.made.page.isClosed() && !this.crashed.has(entry.made.page)) {
        this.counts.reused++;
        if (list.length === 0) this.byKey.delete(key);
        return entry.made;
      }
      this.close(entry.made);
    }
    this.byKey.delete(key);
    return undefined;
  }

  /** Whether a context that just served a render may be readied to wait again. */
  mayWait(made: Made<unknown>): boolean {
    return !made.page.isClosed() && !this.crashed.has(made.page) && (this.uses.get(made.context) ?? 0) + 1 < REUSE_LIMIT;
  }

  /** Puts a readied context to wait; beyond `max` waiting, the oldest of the longest-waiting key is closed. */
  put(owner: O, key: string, made: Made<unknown>, max: number): void {
    const uses = (this.uses.get(made.context) ?? 0) + 1;
    if (uses === 1) made.page.on('crash', () => this.crashed.add(made.page));
    this.uses.set(made.context, uses);
    while (this.count >= max && this.dropOldest());
    const entry: Entry<O> = { owner, made, timer: setTimeout(() => this.dropWhere((candidate) => candidate === entry), WAIT_MS) };
    entry.timer.unref();
    this.byKey.set(key, [...(this.byKey.get(key) ?? []), entry]);
    this.count++;
    this.counts.recycled++;
  }

  /** Closes the one that has waited longest (first of the key waiting longest); false when none waits. */
  dropOldest(): boolean {
    const first = this.byKey.values().next().value?.[0];
    if (first) this.dropWhere((entry) => entry === first);
    return first !== undefined;
  }

  /** Closes the contexts of the owners `which` picks (all of them without one). */
  drop(which: (owner: O) => boolean = () => true): void {
    this.dropWhere((entry) => which(entry.owner));
  }

  private dropWhere(which: (entry: Entry<O>) => boolean): void {
    for (const [key, list] of this.byKey) {
      const keep = list.filter((entry) => !which(entry));
      for (const entry of list) {
        if (keep.includes(entry)) continue;
        clearTimeout(entry.timer);
        this.count--;
        this.close(entry.made);
      }
      if (keep.length > 0) this.byKey.set(key, keep);
      else this.byKey.delete(key);
    }
  }
}
