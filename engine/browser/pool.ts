/**
 * The browser pool of one process (the API and the worker each own one).
 *
 *   withPage ──▶ wait for a page slot (BROWSER_MAX_PAGES) ──▶ current browser (launched lazily)
 *            ──▶ new context (proxy, viewport, device) or the spare made ahead with the same options
 *            ──▶ new page ──▶ prepare(page) (the request gate) ──▶ work(lease)
 *            ──▶ finally: close page and context, free the slot
 *
 * Once a browser served a page, the context of the next request in the common configuration (no proxy,
 * no per-caller setting) is made ahead while the current one renders (`Spare`): one at most, never used
 * twice, dropped with its browser.
 *
 * A request with a `reuseKey` (one account's requests, with the same context options) may get the
 * context and page an earlier request with that key left, once its `recycle` readied them (cookies and
 * storage cleared, the page frozen): the renderer process of the site stays, which halves the CPU of
 * a page (engine/browser/README.md). Requests with different keys never share a context. At most
 * BROWSER_MAX_PAGES contexts wait, each for IDLE_MS at most and for REUSE_LIMIT requests in all.
 *
 * With no render for BROWSER_IDLE_CLOSE_MS, every browser is closed (the waiting contexts and the
 * spare go with it); the next render launches a browser again.
 *
 * A browser that served BROWSER_RETIRE_AFTER_PAGES pages is retired: new pages go to a fresh browser
 * and the old one closes when its last page does. A browser that crashes or disconnects is dropped at
 * once and its leftover processes are killed by pid. `close()` closes every browser and checks in
 * /proc that none of the processes it launched is left.
 */
import { randomUUID } from 'node:crypto';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { childEnvironment, type Config } from '../../core/config';
import type { Logger } from '../../core/log';
import { chromiumArgs, findChromium, type HostOverride } from './flags';
import { BROWSER_MARK, killPids, markedProcesses } from './processes';
import { Slots } from './slots';
import { stopWith } from './types';

export interface BrowserInfo {
  id: string;
  /** Process id of the browser's main process (undefined if it could not be found). */
  pid?: number;
  pagesServed: number;
  openPages: number;
}

export type RetireReason = 'page_limit' | 'disconnected' | 'pool_closing' | 'idle';

export interface PoolHooks {
  browserLaunched?(info: BrowserInfo): void;
  browserRetired?(info: BrowserInfo, reason: RetireReason): void;
}

export interface BrowserPoolOptions {
  executablePath: string;
  /** Pages open at once across the pool. */
  maxPages: number;
  /** Pages a browser serves before it is replaced. */
  retireAfterPages: number;
  hostOverrides?: readonly HostOverride[];
  extraArgs?: readonly string[];
  launchTimeoutMs?: number;
  /** With no page open for this long, every browser closes (0: never); the next render launches one. */
  idleCloseMs?: number;
  log?: Logger;
  hooks?: PoolHooks;
}

export interface PageLease<P = undefined> {
  page: Page;
  context: BrowserContext;
  /** What the request's `prepare` made of the fresh page. */
  prepared: P;
  /** The context and page served an earlier request with the same reuse key. */
  reused: boolean;
  browser: Browser;
  browserId: string;
  /** False once the browser serving this page crashed, disconnected or was closed. */
  browserAlive(): boolean;
}

export interface PageRequest<P = undefined> {
  /** Options of the request's context; a function gets the browser (for its version, say). */
  context?: BrowserContextOptions | ((browser: Browser) => BrowserContextOptions);
  /** Set-up of the fresh page before any navigation (the request gate, say); made ahead with a spare. */
  prepare?: (page: Page) => Promise<P>;
  /**
   * These options are the common configuration (no proxy, no per-caller settings): a context with the
   * same options may be made ahead for the next such request (see `Spare`).
   */
  warmable?: boolean;
  /** Epoch milliseconds after which waiting for a slot or a launch gives up (`timeout`). */
  deadline?: number;
  signal?: AbortSignal;
  /** Requests with the same key (and the same context options) may use one context in turn. */
  reuseKey?: string;
  /**
   * Readies the context and page `work` used for the next request with the same key; false (or a
   * throw) closes them instead. Called only when `work` succeeded and its browser is still serving.
   */
  recycle?: (used: PageLease<P>) => Promise<boolean>;
}

/** How long a recycled context waits for the next request with its key, and how many requests it serves. */
const IDLE_MS = 30_000;
const REUSE_LIMIT = 50;

interface Idle {
  managed: Managed;
  made: Made<unknown>;
  timer: NodeJS.Timeout;
}

/**
 * A context and page made ahead with the options of the last warmable request, while the pool is busy
 * with others: the next request with exactly the same options takes it instead of waiting for a new
 * one. It is never used by a second request, and it is made only on a browser that already served a
 * page, so a pool used once (the per-request baseline of bench/render.ts) never makes one.
 */
interface Spare {
  managed: Managed;
  key: string;
  prepare: ((page: Page) => Promise<unknown>) | undefined;
  ready: Promise<Made<unknown> | undefined>;
}

interface Made<P> {
  context: BrowserContext;
  page: Page;
  prepared: P;
}

interface Managed {
  id: string;
  browser: Browser;
  pid?: number;
  pagesServed: number;
  openPages: number;
  retired: boolean;
  connected: boolean;
}

export function browserPoolOptionsFromConfig(
  config: Pick<Config, 'chromiumPath' | 'browserMaxPages' | 'browserRetireAfterPages' | 'hostOverrides' | 'browserIdleCloseMs'>,
  log?: Logger,
): BrowserPoolOptions {
  return {
    executablePath: findChromium(config.chromiumPath),
    maxPages: config.browserMaxPages,
    retireAfterPages: config.browserRetireAfterPages,
    idleCloseMs: config.browserIdleCloseMs,
    hostOverrides: config.hostOverrides,
    log,
  };
}

export class BrowserPool {
  private readonly slots: Slots;
  private readonly browsers = new Set<Managed>();
  /** The mark of every browser this pool started, until its processes are seen gone. */
  private readonly marks = new Set<string>();
  private readonly closings = new Set<Promise<void>>();
  private current: Managed | undefined;
  private spare: Spare | undefined;
  private launching: Promise<Managed> | undefined;
  private closed = false;
  private launchedCount = 0;
  private readonly spareCounts = { made: 0, used: 0 };
  /** Recycled contexts by reuse key, oldest first. */
  private readonly idle = new Map<string, Idle[]>();
  /** Renders waiting for or holding a page, and the timer that closes the browsers when none is. */
  private working = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private idleCount = 0;
  private readonly uses = new WeakMap<BrowserContext, number>();
  /** Pages whose renderer crashed: never handed to another request. */
  private readonly crashed = new WeakSet<Page>();
  private readonly reuseCounts = { recycled: 0, reused: 0 };

  constructor(private readonly options: BrowserPoolOptions) {
    this.slots = new Slots(options.maxPages);
  }

  /**
   * Runs `work` on a page in a context of its own: a fresh one, or one an earlier request with the same
   * reuse key left readied. Afterwards the context is closed, or readied and kept for the next one.
   */
  async withPage<T, P = undefined>(request: PageRequest<P>, work: (lease: PageLease<P>) => Promise<T>): Promise<T> {
    if (this.closed) throw stopWith('pool_closed', 'the browser pool is shutting down');
    this.working++;
    clearTimeout(this.idleTimer);
    try {
      return await this.onPage(request, work);
    } finally {
      if (--this.working === 0 && this.options.idleCloseMs) this.idleTimer = setTimeout(() => this.closeIdleBrowsers(), this.options.idleCloseMs).unref();
    }
  }

  /**
   * No render for `idleCloseMs`: every browser goes (its waiting contexts and the spare with it), so an
   * idle process holds no Chromium; the next render launches one as the first did.
   */
  private closeIdleBrowsers(): void {
    if (this.working > 0 || this.closed) return;
    this.dropIdle(() => true);
    for (const managed of [...this.browsers]) {
      this.retire(managed, 'idle');
      if (managed.openPages === 0) this.closeBrowser(managed);
    }
  }

  private async onPage<T, P>(request: PageRequest<P>, work: (lease: PageLease<P>) => Promise<T>): Promise<T> {
    const release = await this.slots.acquire(request.deadline, request.signal);
    let managed: Managed | undefined;
    let context: BrowserContext | undefined;
    try {
      managed = await this.browserForPage(request.deadline);
      const serving = managed;
      serving.openPages++;
      serving.pagesServed++;
      if (serving.pagesServed >= this.options.retireAfterPages) this.retire(serving, 'page_limit');
      const options = typeof request.context === 'function' ? request.context(serving.browser) : request.context;
      const key = JSON.stringify(options ?? {});
      const { recycle } = request;
      const reuseKey = request.reuseKey === undefined || !recycle ? undefined : `${request.reuseKey}\n${key}`;
      const recycled = reuseKey === undefined ? undefined : this.takeIdle(serving, reuseKey);
      const spare = recycled ? undefined : await this.takeSpare(serving, key, request.prepare);
      let made: Made<P>;
      if (recycled ?? spare) {
        made = (recycled ?? spare) as Made<P>;
        context = made.context;
      } else {
        context = await serving.browser.newContext(options);
        made = await makePage(context, request.prepare);
      }
      if (!recycled && request.warmable && serving.pagesServed > 1) this.makeSpare(serving, options, key, request.prepare);
      const lease: PageLease<P> = { ...made, reused: recycled !== undefined, browser: serving.browser, browserId: serving.id, browserAlive: () => serving.connected };
      const result = await work(lease);
      if (reuseKey !== undefined && recycle && (await this.recycle(serving, reuseKey, made, () => recycle(lease)))) context = undefined;
      return result;
    } catch (error) {
      if (this.closed && managed && !managed.connected) throw stopWith('pool_closed', 'the browser pool shut down during the render');
      if (managed && (await diedDuring(managed, error))) throw stopWith('browser_crashed', 'the browser stopped while rendering the page');
      throw error;
    } finally {
      if (context) await context.close().catch(() => undefined);
      if (managed) {
        managed.openPages--;
        if (managed.retired && managed.openPages === 0) this.closeBrowser(managed);
      }
      release();
    }
  }

  /** Browsers alive now, for health checks and tests. */
  browserInfos(): BrowserInfo[] {
    return [...this.browsers].map(info);
  }

  get launched(): number {
    return this.launchedCount;
  }

  /** Contexts made ahead so far, and how many of them served a request (see `Spare`). */
  get spares(): { made: number; used: number } {
    return { ...this.spareCounts };
  }

  /** Contexts readied for another request so far, and how many requests got one. */
  get reuse(): { recycled: number; reused: number; waiting: number } {
    return { ...this.reuseCounts, waiting: this.idleCount };
  }

  /** Marks of the browsers whose processes may still exist (see processes.ts), for measurements. */
  browserMarks(): string[] {
    return [...this.marks];
  }

  /** Live process ids of every browser this pool launched (helpers included). */
  processIds(): number[] {
    return markedProcesses(this.marks).map(({ pid }) => pid);
  }

  /**
   * Stops taking pages, gives the pages open now up to `graceMs` to finish, closes every browser and
   * makes sure none of their processes is left. Idempotent.
   */
  async close(graceMs = 5_000): Promise<void> {
    this.closed = true;
    clearTimeout(this.idleTimer);
    this.slots.close();
    await this.launching?.catch(() => undefined);
    for (const stop = Date.now() + graceMs; this.slots.inUse > 0 && Date.now() < stop; ) await new Promise((resolve) => setTimeout(resolve, 20));
    this.dropSpare();
    this.dropIdle(() => true);
    for (const managed of [...this.browsers]) this.closeBrowser(managed, 'pool_closing');
    while (this.closings.size > 0) await Promise.all([...this.closings]);
    // Helpers exit a moment after the browser; stragglers after a second are killed, by pid.
    for (let attempt = 0; attempt < 250 && this.processIds().length > 0; attempt++) {
      if (attempt === 50) killPids(this.processIds());
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const left = this.processIds();
    if (left.length > 0) this.options.log?.error('chromium processes left after closing the pool', { pids: left });
    else this.marks.clear();
  }

  private async browserForPage(deadline: number | undefined): Promise<Managed> {
    if (this.current && this.current.connected && !this.current.retired) return this.current;
    this.launching ??= this.launch(deadline).finally(() => {
      this.launching = undefined;
    });
    const managed = await this.launching;
    if (this.closed) throw stopWith('pool_closed', 'the browser pool is shutting down');
    return managed;
  }

  private async launch(deadline: number | undefined): Promise<Managed> {
    const id = randomUUID();
    this.marks.add(id);
    const timeout = Math.max(1_000, Math.min(this.options.launchTimeoutMs ?? 30_000, deadline ? deadline - Date.now() : Infinity));
    let browser: Browser;
    try {
      // Loaded with the first launch: playwright's code is ≈60 MB of a process that never renders.
      const { chromium } = await import('playwright-core');
      browser = await chromium.launch({
        executablePath: this.options.executablePath,
        headless: true,
        chromiumSandbox: false,
        args: chromiumArgs({ hostOverrides: this.options.hostOverrides ?? [], extra: this.options.extraArgs }),
        // Inherited by every process of the browser: how the pool finds them all in /proc.
        env: childEnvironment({ [BROWSER_MARK]: id }),
        timeout,
        // The process's own shutdown closes the pool; playwright must not act on signals by itself.
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      });
    } catch (error) {
      this.options.log?.error('chromium did not start', { error });
      throw stopWith('launch_failed', 'the browser could not be started');
    }
    const pid = markedProcesses(new Set([id])).find((process) => process.leader)?.pid;
    const managed: Managed = { id, browser, pid, pagesServed: 0, openPages: 0, retired: false, connected: true };
    browser.on('disconnected', () => this.onDisconnected(managed));
    this.browsers.add(managed);
    this.current = managed;
    this.launchedCount++;
    this.options.log?.info('browser launched', { browser: id, pid: managed.pid });
    this.options.hooks?.browserLaunched?.(info(managed));
    if (this.closed) this.closeBrowser(managed, 'pool_closing');
    return managed;
  }

  private retire(managed: Managed, reason: RetireReason): void {
    if (managed.retired) return;
    managed.retired = true;
    if (this.spare?.managed === managed) this.dropSpare();
    this.dropIdle((idle) => idle.managed === managed);
    if (this.current === managed) this.current = undefined;
    this.options.log?.info('browser retired', { browser: managed.id, reason, pages: managed.pagesServed });
    this.options.hooks?.browserRetired?.(info(managed), reason);
  }

  private onDisconnected(managed: Managed): void {
    if (!managed.connected) return;
    managed.connected = false;
    this.browsers.delete(managed);
    this.retire(managed, 'disconnected');
    // Helpers of a browser that died may outlive it for a moment; they are ours, by mark.
    killPids(markedProcesses(new Set([managed.id])).map(({ pid }) => pid));
  }

  /** The spare made on `managed` with exactly these options and set-up, if there is one (it is then no longer the spare). */
  private async takeSpare(managed: Managed, key: string, prepare: ((page: Page) => Promise<unknown>) | undefined): Promise<Made<unknown> | undefined> {
    const spare = this.spare;
    if (!spare || spare.managed !== managed || spare.key !== key || spare.prepare !== prepare) return undefined;
    this.spare = undefined;
    const made = await spare.ready;
    if (made && !made.page.isClosed() && managed.connected) {
      this.spareCounts.used++;
      return made;
    }
    await made?.context.close().catch(() => undefined);
    return undefined;
  }

  private makeSpare(managed: Managed, options: BrowserContextOptions | undefined, key: string, prepare: ((page: Page) => Promise<unknown>) | undefined): void {
    if (this.spare || this.closed || managed.retired || !managed.connected) return;
    // A spare that would outlive the browser's page budget is not worth making.
    if (managed.pagesServed + 1 >= this.options.retireAfterPages) return;
    const ready = managed.browser
      .newContext(options)
      .then((context) => makePage(context, prepare))
      .catch(() => undefined);
    this.spare = { managed, key, prepare, ready };
    this.spareCounts.made++;
  }

  /** A recycled context of `managed` left with this key, if one is waiting and usable. */
  private takeIdle(managed: Managed, key: string): Made<unknown> | undefined {
    const waiting = this.idle.get(key);
    while (waiting && waiting.length > 0) {
      const idle = waiting.shift() as Idle;
      this.idleCount--;
      clearTimeout(idle.timer);
      if (idle.managed === managed && managed.connected && !idle.made.page.isClosed() && !this.crashed.has(idle.made.page)) {
        this.reuseCounts.reused++;
        if (waiting.length === 0) this.idle.delete(key);
        return idle.made;
      }
      this.closeIdle(idle);
    }
    this.idle.delete(key);
    return undefined;
  }

  /** Readies a used context for the next request with its key; true when it now waits for one. */
  private async recycle(managed: Managed, key: string, made: Made<unknown>, ready: () => Promise<boolean>): Promise<boolean> {
    const uses = (this.uses.get(made.context) ?? 0) + 1;
    if (this.closed || managed.retired || !managed.connected || made.page.isClosed() || this.crashed.has(made.page) || uses >= REUSE_LIMIT) return false;
    if (!(await ready().catch(() => false))) return false;
    if (this.closed || managed.retired || !managed.connected) return false;
    if (uses === 1) made.page.on('crash', () => this.crashed.add(made.page));
    this.uses.set(made.context, uses);
    // At most BROWSER_MAX_PAGES wait: the first of the longest-waiting key makes room.
    while (this.idleCount >= this.options.maxPages) {
      const first = this.idle.values().next().value?.[0];
      if (!first) break;
      this.dropIdle((entry) => entry === first);
    }
    const idle: Idle = { managed, made, timer: setTimeout(() => this.dropIdle((entry) => entry === idle), IDLE_MS) };
    idle.timer.unref();
    this.idle.set(key, [...(this.idle.get(key) ?? []), idle]);
    this.idleCount++;
    this.reuseCounts.recycled++;
    return true;
  }

  /** Closes the waiting contexts `which` picks. */
  private dropIdle(which: (idle: Idle) => boolean): void {
    for (const [key, list] of this.idle) {
      const keep = list.filter((idle) => !which(idle));
      for (const idle of list) {
        if (keep.includes(idle)) continue;
        clearTimeout(idle.timer);
        this.idleCount--;
        this.closeIdle(idle);
      }
      if (keep.length > 0) this.idle.set(key, keep);
      else this.idle.delete(key);
    }
  }

  private closeIdle(idle: Idle): void {
    const closing = idle.made.context
      .close()
      .catch(() => undefined)
      .then(() => {
        this.closings.delete(closing);
      });
    this.closings.add(closing);
  }

  /** Closes the spare (its browser is retired, gone or the pool closes). */
  private dropSpare(): void {
    const spare = this.spare;
    if (!spare) return;
    this.spare = undefined;
    const closing = spare.ready
      .then((made) => made?.context.close())
      .catch(() => undefined)
      .then(() => {
        this.closings.delete(closing);
      });
    this.closings.add(closing);
  }

  private closeBrowser(managed: Managed, reason?: RetireReason): void {
    if (reason) this.retire(managed, reason);
    const closing = managed.browser
      .close()
      .catch(() => undefined)
      .then(() => {
        this.onDisconnected(managed);
        this.closings.delete(closing);
      });
    this.closings.add(closing);
  }
}

/** A page in `context` and its set-up; the context is closed again when either fails. */
async function makePage<P>(context: BrowserContext, prepare: ((page: Page) => Promise<P>) | undefined): Promise<Made<P>> {
  try {
    const page = await context.newPage();
    return { context, page, prepared: prepare ? await prepare(page) : (undefined as P) };
  } catch (error) {
    await context.close().catch(() => undefined);
    throw error;
  }
}

const CLOSED = /closed|crash|disconnect/i;

/** Whether the browser went away under a failed page; its disconnect may be reported just after the failure. */
async function diedDuring(managed: Managed, error: unknown): Promise<boolean> {
  if (!managed.connected || !managed.browser.isConnected()) return true;
  if (!CLOSED.test(error instanceof Error ? error.message : String(error))) return false;
  await new Promise((resolve) => setTimeout(resolve, 100));
  return !managed.connected || !managed.browser.isConnected();
}

const info = (managed: Managed): BrowserInfo => ({
  id: managed.id,
  pid: managed.pid,
  pagesServed: managed.pagesServed,
  openPages: managed.openPages,
});
