/**
 * The browser pool of one process (the API and the worker each own one; with `share`, the first of them
 * to render hosts the machine's browser and the other's renders come to its pool: share.ts).
 *
 *   withPage ──▶ wait for a page slot (BROWSER_MAX_PAGES; an owner at most its share, owners in turn:
 *                slots.ts) ──▶ current browser (launched lazily)
 *            ──▶ new context (proxy, viewport, device) or the spare made ahead with the same options
 *            ──▶ new page ──▶ prepare(page) (the request gate) ──▶ work(lease)
 *            ──▶ finally: close page and context, free the slot
 *
 * Once a browser served a page, the context of the next request in the common configuration (no proxy,
 * no per-caller setting) is made ahead while the current one renders (spare.ts): one at most, never used
 * twice, kept only while renders that need a new context are coming, dropped with its browser.
 *
 * A request with a `reuseKey` (one account's requests, with the same context options) may get the
 * context and page an earlier request with that key left, once its `recycle` readied them (cookies and
 * storage cleared, garbage collected, the page frozen): the renderer process of the site stays, which halves the CPU of
 * a page (engine/browser/README.md). The readying runs after the render has answered (its page keeps
 * its slot meanwhile); a render of the key that finds no readied context waits for one being readied. Requests with different keys never share a context (waiting.ts).
 * Contexts alive, open or waiting, are at most BROWSER_MAX_PAGES (the spare aside): a render that
 * needs a new one closes the context that has waited longest when there would be more, so waiting
 * contexts cost no more renderers than the pool's full concurrency does.
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
import { childEnvironment, type Config } from '../../base/config';
import type { Logger } from '../../base/log';
import { makePage, type Made } from './contexts';
import { chromiumArgs, findChromium, type HostOverride } from './flags';
import { BusyRenderers } from './demote';
import { BrowserCpuGroup } from './cpu-group';
import { BROWSER_MARK, killPids, markedProcesses, sessionProcesses } from './processes';
import { Slots } from './slots';
import { SpareContext } from './spare';
import { stopWith } from './types';
import { WaitingContexts } from './waiting';
import { RenderShare, type ShareOptions } from './share';

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
  /** WebGL through the software rasterizer (default); false spares the GPU process its memory. */
  webgl?: boolean;
  launchTimeoutMs?: number;
  /** With no page open for this long, every browser closes (0: never); the next render launches one. */
  idleCloseMs?: number;
  /** The spare is made only when renders come at most this far apart, and closed when none takes it in this time (spare.ts). */
  spareLifeMs?: number;
  /** Once a page has been open this long, renderers that keep a core busy get the lowest CPU priority (demote.ts); 0: never. */
  demoteAfterMs?: number;
  /** The browsers' CPU weight against one of the service's processes, in percent, in a control group of their own (cpu-group.ts); 0 or unset: none. */
  cpuWeightPercent?: number;
  log?: Logger;
  hooks?: PoolHooks;
  /** One browser for the processes of the service on this machine (share.ts); unset: this pool's own. */
  share?: ShareOptions;
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
   * same options may be made ahead for the next such request (spare.ts).
   */
  warmable?: boolean;
  /** Epoch milliseconds after which waiting for a slot or a launch gives up (`timeout`). */
  deadline?: number;
  signal?: AbortSignal;
  /** Requests with the same key (and the same context options) may use one context in turn. */
  reuseKey?: string;
  /** Whose request this is (the caller's account): its requests hold at most `share` pages at once (slots.ts). */
  owner?: string;
  /** Pages the owner's requests may hold at once (cut to 1..maxPages); unset: all of them. */
  share?: number;
  /**
   * Readies the context and page `work` used for the next request with the same key; false (or a
   * throw) closes them instead. Called only when `work` succeeded and its browser is still serving.
   */
  recycle?: (used: PageLease<P>) => Promise<boolean>;
}

/** The spare's life when `spareLifeMs` is not given: renders further apart than this do not need one ahead. */
const SPARE_LIFE_MS = 10_000;
/** When `demoteAfterMs` is not given: well past an ordinary render (the settle after load is capped at 3 s). */
const DEMOTE_AFTER_MS = 2_000;

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
  config: Pick<
    Config,
    'chromiumPath' | 'browserMaxPages' | 'browserRetireAfterPages' | 'hostOverrides' | 'browserIdleCloseMs' | 'browserShare' | 'browserWebgl' | 'browserCpuWeight' | 'dataDir' | 'targetAllowlist' | 'proxies' | 'premiumProxies'
  >,
  log?: Logger,
): BrowserPoolOptions {
  return {
    executablePath: findChromium(config.chromiumPath),
    maxPages: config.browserMaxPages,
    retireAfterPages: config.browserRetireAfterPages,
    idleCloseMs: config.browserIdleCloseMs,
    cpuWeightPercent: config.browserCpuWeight,
    hostOverrides: config.hostOverrides,
    webgl: config.browserWebgl,
    log,
    // Processes that launch their browser differently never share one: the host's switches would apply.
    ...(config.browserShare
      ? { share: { dataDir: config.dataDir, profile: JSON.stringify([config.hostOverrides, config.targetAllowlist, config.proxies, config.premiumProxies, config.browserWebgl]), log } }
      : {}),
  };
}

export class BrowserPool {
  private readonly slots: Slots;
  private readonly browsers = new Set<Managed>();
  /** The mark of every browser this pool started, until its processes are seen gone. */
  private readonly marks = new Set<string>();
  private readonly closings = new Set<Promise<void>>();
  private current: Managed | undefined;
  private readonly spare: SpareContext<Managed>;
  private launching: Promise<Managed> | undefined;
  private closed = false;
  private launchedCount = 0;
  /** Recycled contexts waiting for the next render with their key. */
  private readonly waiting = new WaitingContexts<Managed>((made) => this.track(made.context.close()));
  /** Contexts being readied for their key's next render after answering theirs (readyLater), by key. */
  private readonly readying = new Map<string, Set<Promise<void>>>();
  /** Renders holding a context now, by reuse key (with the context options). */
  private readonly open = new Map<string, number>();
  /** Renders waiting for or holding a page, and the timer that closes the browsers when none is. */
  private working = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  /** Set when the pool is shared with the service's other processes: renders go through it (render.ts). */
  readonly share: RenderShare | undefined;
  private readonly busy: BusyRenderers | undefined;
  private readonly cpuGroup: BrowserCpuGroup | undefined;

  constructor(private readonly options: BrowserPoolOptions) {
    this.cpuGroup = options.cpuWeightPercent ? new BrowserCpuGroup({ weightPercent: options.cpuWeightPercent, ...(options.log ? { log: options.log } : {}) }) : undefined;
    this.share = options.share ? new RenderShare(options.share) : undefined;
    this.slots = new Slots(options.maxPages);
    const demoteAfterMs = options.demoteAfterMs ?? DEMOTE_AFTER_MS;
    this.busy = demoteAfterMs > 0 ? new BusyRenderers({ processes: () => sessionProcesses(this.leaders()), afterMs: demoteAfterMs, log: options.log }) : undefined;
    this.spare = new SpareContext(options.spareLifeMs ?? SPARE_LIFE_MS, (closing) => this.track(closing));
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
    this.waiting.drop();
    for (const managed of [...this.browsers]) {
      this.retire(managed, 'idle');
      if (managed.openPages === 0) this.closeBrowser(managed);
    }
  }

  private async onPage<T, P>(request: PageRequest<P>, work: (lease: PageLease<P>) => Promise<T>): Promise<T> {
    const release = await this.slots.acquire({ owner: request.owner, share: request.share, deadline: request.deadline, signal: request.signal });
    const watched = this.busy?.pageOpened();
    let managed: Managed | undefined;
    let context: BrowserContext | undefined;
    let reuseKey: string | undefined;
    /** Set when the page and slot went to the readying after the answer (`readyLater`), which frees them. */
    let handedOff = false;
    try {
      managed = await this.browserForPage(request.deadline);
      const serving = managed;
      serving.openPages++;
      serving.pagesServed++;
      if (serving.pagesServed >= this.options.retireAfterPages) this.retire(serving, 'page_limit');
      const options = typeof request.context === 'function' ? request.context(serving.browser) : request.context;
      const key = JSON.stringify(options ?? {});
      if (request.reuseKey !== undefined && request.recycle) {
        reuseKey = `${request.reuseKey}\n${key}`;
        this.open.set(reuseKey, (this.open.get(reuseKey) ?? 0) + 1);
      }
      const { made, recycled } = await this.contextFor(serving, request, options, key, reuseKey);
      context = made.context;
      const lease: PageLease<P> = { ...made, reused: recycled, browser: serving.browser, browserId: serving.id, browserAlive: () => serving.connected };
      const result = await work(lease);
      const { recycle } = request;
      if (reuseKey !== undefined && recycle && this.mayRecycle(serving, made)) {
        // Readied after the answer, not before it: the caller does not wait for the clearing, and the
        // next render with this key waits for it (contextFor) rather than making a context.
        this.readyLater(serving, reuseKey, made, () => recycle(lease), release);
        handedOff = true;
        context = undefined;
      }
      return result;
    } catch (error) {
      if (this.closed && managed && !managed.connected) throw stopWith('pool_closed', 'the browser pool shut down during the render');
      if (managed && (await diedDuring(managed, error))) throw stopWith('browser_crashed', 'the browser stopped while rendering the page');
      throw error;
    } finally {
      if (reuseKey !== undefined) {
        const left = (this.open.get(reuseKey) ?? 1) - 1;
        if (left > 0) this.open.set(reuseKey, left);
        else this.open.delete(reuseKey);
      }
      if (context) await context.close().catch(() => undefined);
      watched?.();
      if (managed && !handedOff) this.pageDone(managed);
      if (!handedOff) release();
    }
  }

  /** A page of `managed` is done: a retired browser closes with its last page. */
  private pageDone(managed: Managed): void {
    managed.openPages--;
    if (managed.retired && managed.openPages === 0) this.closeBrowser(managed);
  }

  /** Whether a context that just served a render may be readied for the next one with its key. */
  private mayRecycle(managed: Managed, made: Made<unknown>): boolean {
    return !this.closed && !managed.retired && managed.connected && this.waiting.mayWait(made);
  }

  /**
   * Readies a used context for the next render with its key once its render has answered; the page
   * still counts as open and keeps its slot until then (BROWSER_MAX_PAGES holds, and `close()` waits
   * for it). A context that cannot be readied is closed.
   */
  private readyLater(managed: Managed, key: string, made: Made<unknown>, ready: () => Promise<boolean>, release: () => void): void {
    const readying = (async () => {
      try {
        if (!(await this.recycle(managed, key, made, ready))) await made.context.close().catch(() => undefined);
      } finally {
        this.pageDone(managed);
        release();
      }
    })().catch(() => undefined);
    const pending = this.readying.get(key) ?? new Set<Promise<void>>();
    pending.add(readying);
    this.readying.set(key, pending);
    void readying.then(() => {
      pending.delete(readying);
      if (pending.size === 0 && this.readying.get(key) === pending) this.readying.delete(key);
    });
  }

  /**
   * The request's context: one its reuse key left waiting, else the spare made with these options
   * (`key`), else a new one.
   */
  private async contextFor<P>(
    serving: Managed,
    request: PageRequest<P>,
    options: BrowserContextOptions | undefined,
    key: string,
    reuseKey: string | undefined,
  ): Promise<{ made: Made<P>; recycled: boolean }> {
    let recycled = reuseKey === undefined ? undefined : this.waiting.take(serving, reuseKey);
    const readying = reuseKey === undefined ? undefined : this.readying.get(reuseKey);
    if (!recycled && reuseKey !== undefined && readying && readying.size > 0) {
      // This key's last context is being readied (a few ms): waited for rather than a new one made.
      await Promise.race(readying);
      recycled = this.waiting.take(serving, reuseKey);
    }
    if (recycled) {
      // Renders with these options take turns on their own contexts: a spare for them would not be taken.
      this.spare.drop((_owner, spareKey) => spareKey === key);
      return { made: recycled as Made<P>, recycled: true };
    }
    this.makeRoom();
    const spare = (await this.spare.take(serving, key, request.prepare, () => serving.connected)) as Made<P> | undefined;
    const made = spare ?? (await makePage(await serving.browser.newContext(options), request.prepare));
    // A spare serves renders that find no context of their own: not this key's next one while another of its renders is open.
    const ownTurns = reuseKey !== undefined && (this.open.get(reuseKey) ?? 0) > 1;
    if (this.spare.needed() && !ownTurns && request.warmable) this.makeSpare(serving, options, key, request.prepare);
    return { made, recycled: false };
  }

  /** Browsers alive now, for health checks and tests. */
  browserInfos(): BrowserInfo[] {
    return [...this.browsers].map(info);
  }

  get launched(): number {
    return this.launchedCount;
  }

  /** Contexts made ahead so far, how many of them served a request, and whether one waits now (spare.ts). */
  get spares(): { made: number; used: number; waiting: boolean } {
    return { ...this.spare.counts, waiting: this.spare.waiting };
  }

  /** Resolves once every context being readied after its render answered waits for its key (or is closed). */
  async readied(): Promise<void> {
    while (this.readying.size > 0) await Promise.all([...this.readying.values()].flatMap((pending) => [...pending]));
  }

  /** Contexts readied for another request so far, how many requests got one, and how many wait now. */
  get reuse(): { recycled: number; reused: number; waiting: number } {
    return { ...this.waiting.counts, waiting: this.waiting.size };
  }

  /** Marks of the browsers whose processes may still exist (see processes.ts), for measurements. */
  browserMarks(): string[] {
    return [...this.marks];
  }

  /** Main processes of the browsers alive: their sessions hold their helpers. */
  private leaders(): Set<number> {
    const pids = new Set<number>();
    for (const managed of this.browsers) if (managed.pid !== undefined) pids.add(managed.pid);
    return pids;
  }

  /** Renderers given the lowest CPU priority so far for keeping a core busy (demote.ts). */
  get demoted(): number {
    return this.busy?.count ?? 0;
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
    // Other processes' renders stop coming here (theirs in flight are cancelled; they take over).
    await this.share?.close();
    this.closed = true;
    clearTimeout(this.idleTimer);
    this.busy?.stop();
    this.slots.close();
    await this.launching?.catch(() => undefined);
    for (const stop = Date.now() + graceMs; this.slots.inUse > 0 && Date.now() < stop; ) await new Promise((resolve) => setTimeout(resolve, 20));
    this.spare.drop();
    this.waiting.drop();
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
        args: chromiumArgs({ hostOverrides: this.options.hostOverrides ?? [], extra: this.options.extraArgs, webgl: this.options.webgl }),
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
    // Twice: a helper forked by one not moved yet while the first pass ran is caught by the second.
    if (pid !== undefined && this.cpuGroup) for (let pass = 0; pass < 2; pass++) this.cpuGroup.join(sessionProcesses(new Set([pid])).map((process) => process.pid));
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
    this.spare.drop((owner) => owner === managed);
    this.waiting.drop((owner) => owner === managed);
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

  private makeSpare(managed: Managed, options: BrowserContextOptions | undefined, key: string, prepare: ((page: Page) => Promise<unknown>) | undefined): void {
    if (this.closed || managed.retired || !managed.connected) return;
    // Never for a browser's first page (a pool used once makes none), nor past its page budget.
    if (managed.pagesServed < 2 || managed.pagesServed + 1 >= this.options.retireAfterPages) return;
    this.spare.make(managed, managed.browser, options, key, prepare);
  }

  /** A render needs a new context: waiting ones give way while open and waiting would exceed maxPages. */
  private makeRoom(): void {
    let open = 0;
    for (const managed of this.browsers) open += managed.openPages;
    while (this.waiting.size > 0 && this.waiting.size + open > this.options.maxPages && this.waiting.dropOldest());
  }

  /** Readies a used context for the next request with its key; true when it now waits for one. */
  private async recycle(managed: Managed, key: string, made: Made<unknown>, ready: () => Promise<boolean>): Promise<boolean> {
    if (!this.mayRecycle(managed, made)) return false;
    if (!(await ready().catch(() => false))) return false;
    if (this.closed || managed.retired || !managed.connected) return false;
    this.waiting.put(managed, key, made, this.options.maxPages);
    return true;
  }

  /** Keeps `closing` until it settles, so that `close()` waits for it. */
  private track(closing: Promise<unknown>): void {
    const settled: Promise<void> = closing
      .catch(() => undefined)
      .then(() => {
        this.closings.delete(settled);
      });
    this.closings.add(settled);
  }

  private closeBrowser(managed: Managed, reason?: RetireReason): void {
    if (reason) this.retire(managed, reason);
    this.track(
      managed.browser
        .close()
        .catch(() => undefined)
        .then(() => this.onDisconnected(managed)),
    );
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
