/**
 * The context and page made ahead (pool.ts) with the options of the last request in the common
 * configuration, while the pool is busy with others: the next request with exactly the same options
 * and set-up takes it instead of waiting for a new one. At most one, never used by a second request.
 *
 * It is kept only while renders that need a new context are coming: made only when the last such
 * render came less than `lifeMs` earlier, closed when none took it within `lifeMs`, and closed when
 * requests with its options are served by contexts readied for their reuse key instead (that traffic
 * never takes it, and a waiting renderer is ≈25 MB). `O` is the browser it was made on: only a render
 * on that browser takes it.
 */
import type { Browser, BrowserContextOptions } from 'playwright-core';
import { makePage, type Made, type Prepare } from './contexts';

interface Ahead<O> {
  owner: O;
  key: string;
  prepare: Prepare<unknown> | undefined;
  ready: Promise<Made<unknown> | undefined>;
  timer: NodeJS.Timeout;
}

export class SpareContext<O> {
  private ahead: Ahead<O> | undefined;
  private lastNeed = -Infinity;
  readonly counts = { made: 0, used: 0 };

  /** Whether a spare is made and waiting now. */
  get waiting(): boolean {
    return this.ahead !== undefined;
  }

  /** `closing` receives the close of every spare dropped, for the pool to await on its own close. */
  constructor(
    private readonly lifeMs: number,
    private readonly closing: (done: Promise<unknown>) => void,
  ) {}

  /** A render needs a new context: whether the one before that did came recently enough for a spare to be taken. */
  needed(): boolean {
    const now = performance.now();
    const coming = now - this.lastNeed < this.lifeMs;
    this.lastNeed = now;
    return coming;
  }

  /** The spare made on `owner` with exactly these options and set-up, if there is one and it is usable. */
  async take(owner: O, key: string, prepare: Prepare<unknown> | undefined, ownerAlive: () => boolean): Promise<Made<unknown> | undefined> {
    const ahead = this.ahead;
    if (!ahead || ahead.owner !== owner || ahead.key !== key || ahead.prepare !== prepare) return undefined;
    this.ahead = undefined;
    clearTimeout(ahead.timer);
    const made = await ahead.ready;
    if (made && !made.page.isClosed() && ownerAlive()) {
      this.counts.used++;
      return made;
    }
    await made?.context.close().catch(() => undefined);
    return undefined;
  }

  /** Makes the spare on `owner`'s browser, unless there is one already. */
  make(owner: O, browser: Browser, options: BrowserContextOptions | undefined, key: string, prepare: Prepare<unknown> | undefined): void {
    if (this.ahead) return;
    const ready = browser
      .newContext(options)
      .then((context) => makePage(context, prepare))
      .catch(() => undefined);
    const ahead: Ahead<O> = { owner, key, prepare, ready, timer: setTimeout(() => this.drop((candidate) => candidate === ahead.owner && this.ahead === ahead), this.lifeMs) };
    ahead.timer.unref();
    this.ahead = ahead;
    this.counts.made++;
  }

  /** Closes the spare if `which` picks it (by the browser it was made on and its options key). */
  drop(which: (owner: O, key: string) => boolean = () => true): void {
    const ahead = this.ahead;
    if (!ahead || !which(ahead.owner, ahead.key)) return;
    this.ahead = undefined;
    clearTimeout(ahead.timer);
    this.closing(ahead.ready.then((made) => made?.context.close()).catch(() => undefined));
  }
}
