/**
 * One `js_render` fetch:
 *
 *   target check of the URL ──▶ pool page (own context: proxy, device, viewport, cookies, user agent)
 *   ──▶ request gate on (target check per request, block_resources, caller headers) ──▶ XHR recorder
 *   ──▶ navigate (DOMContentLoaded, then load and any script or challenge redirects, for a while)
 *   ──▶ quiet (what scripts add after load: no DOM change, short timer or content request for a window)
 *   ──▶ wait_for ──▶ wait ──▶ js_instructions ──▶ settle again ──▶ screenshot / PDF ──▶ HTML ──▶ XHR records
 *
 * The whole render runs against one deadline (`RENDER_TIMEOUT_MS` or the request's own): when it passes
 * or the caller's signal aborts, the context is closed under the page and the render ends as
 * `timeout`/`aborted`. Failures come back as values (`RenderFailure`), never as thrown errors.
 */
import type { Browser, BrowserContextOptions, CDPSession, Page } from 'playwright-core';
import type { Config } from '../../base/config';
import type { Logger } from '../../base/log';
import { renderPdf, takeScreenshot } from './capture';
import { ACTION_TIMEOUT_MS, runInstructions } from './instructions-run';
import { installGate, type RequestGate } from './intercept';
import { blockedTypes } from './blocking';
import type { BrowserPool, PageLease } from './pool';
import { isRenderStop, renderFailure, stopWith, type RenderRequest, type RenderResult, type RenderSuccess, type RequestGuard } from './types';
import { settle, watchNetwork, type NetworkWatch, type Settled } from './quiet';
import { trackNavigations, type NavigationTracker } from './settle';
import { recordXhr, type XhrRecorder } from './xhr';

export interface RenderLimits {
  timeoutMs: number;
  instructionsBudgetMs: number;
  actionTimeoutMs: number;
  /** How long, after DOMContentLoaded, the load event is awaited before the page is taken as it is. */
  loadGraceMs: number;
  /**
   * After load: how long the DOM and the network must have been still, with nothing pending, for the
   * page to be taken (0: taken at load), and the longest wait (quiet.ts).
   */
  quietMs: number;
  settleCapMs: number;
  xhrBodyLimit: number;
  xhrMaxEntries: number;
  /** Longest wait for a `wait_for` selector: a missing element is the caller's expectation, not a block to wait out. */
  waitForMs: number;
  screenshotMaxHeight: number;
}

export const DEFAULT_RENDER_LIMITS: RenderLimits = {
  timeoutMs: 60_000,
  instructionsBudgetMs: 20_000,
  actionTimeoutMs: ACTION_TIMEOUT_MS,
  loadGraceMs: 15_000,
  quietMs: 20,
  settleCapMs: 3_000,
  xhrBodyLimit: 256 * 1024,
  xhrMaxEntries: 200,
  waitForMs: 10_000,
  screenshotMaxHeight: 10_000,
};

export function renderLimitsFromConfig(
  config: Pick<Config, 'renderTimeoutMs' | 'jsInstructionsBudgetMs' | 'xhrBodyLimit' | 'screenshotMaxHeight' | 'renderQuietMs' | 'renderSettleCapMs' | 'waitForTimeoutMs'>,
): RenderLimits {
  return {
    ...DEFAULT_RENDER_LIMITS,
    quietMs: config.renderQuietMs,
    settleCapMs: config.renderSettleCapMs,
    timeoutMs: config.renderTimeoutMs,
    instructionsBudgetMs: config.jsInstructionsBudgetMs,
    xhrBodyLimit: config.xhrBodyLimit,
    waitForMs: config.waitForTimeoutMs,
    screenshotMaxHeight: config.screenshotMaxHeight,
  };
}

/** The steps of a render whose wall time `trace` reports (bench/render-steps.ts). */
export type RenderStep = 'page' | 'gate' | 'navigate' | 'load' | 'settle' | 'read' | 'release';

export interface RenderDeps {
  pool: BrowserPool;
  guard: RequestGuard;
  limits?: Partial<RenderLimits>;
  log?: Logger;
  /** Told each step's milliseconds as the render goes: where a render's time goes, for measurements. */
  trace?: (step: RenderStep, ms: number) => void;
}

/** Calls `trace` with the milliseconds since the previous mark. */
function stepClock(trace: RenderDeps['trace']): (step: RenderStep) => void {
  if (!trace) return () => undefined;
  let last = performance.now();
  return (step) => {
    const now = performance.now();
    trace(step, now - last);
    last = now;
  };
}

const DEVICES = {
  desktop: { width: 1920, height: 1080, scale: 1, ua: (major: string) => `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${major}.0.0.0 Safari/537.36` },
  mobile: { width: 412, height: 915, scale: 2.625, ua: (major: string) => `Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${major}.0.0.0 Mobile Safari/537.36` },
} as const;

export async function render(request: RenderRequest, deps: RenderDeps): Promise<RenderResult> {
  // One browser per machine: rendered here when this process hosts it, else by the process that does.
  const share = deps.pool.share;
  return share ? share.render(request, (local) => renderHere(local, deps)) : renderHere(request, deps);
}

async function renderHere(request: RenderRequest, deps: RenderDeps): Promise<RenderResult> {
  const limits = { ...DEFAULT_RENDER_LIMITS, ...deps.limits };
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return renderFailure('invalid_parameter', 'url: not a valid URL', { parameter: 'url' });
  }
  const verdict = await deps.guard(url).catch(() => ({ allowed: false as const, reason: 'the target check failed' }));
  if (!verdict.allowed) return renderFailure('target_forbidden', verdict.reason, { url: url.href });
  const deadline = Date.now() + (request.timeoutMs ?? limits.timeoutMs);
  const mark = stepClock(deps.trace);
  /** When the render got its page: a failure says how long it held it (`heldPageMs`). */
  let paged: number | undefined;
  try {
    const pageRequest = {
      context: (browser: Browser) => contextOptions(request, browser),
      prepare: gateFor(limits.settleCapMs),
      warmable: isDefaultConfiguration(request),
      deadline,
      signal: request.signal,
      owner: request.reuseKey,
      share: request.pageShare,
      // print media emulation (PDF) would outlive the request.
      ...(request.reuseKey !== undefined && !request.pdf ? { reuseKey: request.reuseKey, recycle: readyForReuse } : {}),
    };
    const result = await deps.pool.withPage(pageRequest, (lease) => {
      paged = Date.now();
      return renderOnPage(lease, request, url, limits, deadline, deps, mark);
    });
    mark('release');
    return result;
  } catch (error) {
    if (isRenderStop(error)) {
      const { failure } = error;
      return paged === undefined ? failure : { ...failure, error: { ...failure.error, heldPageMs: Date.now() - paged } };
    }
    deps.log?.error('render failed unexpectedly', { error, url: url.href });
    return renderFailure('internal', 'the page could not be rendered', { url: url.href });
  }
}

async function renderOnPage(
  lease: PageLease<RequestGate>,
  request: RenderRequest,
  url: URL,
  limits: RenderLimits,
  deadline: number,
  deps: RenderDeps,
  mark: (step: RenderStep) => void,
): Promise<RenderSuccess> {
  mark('page');
  const { page, context } = lease;
  const left = (): number => Math.max(1, deadline - Date.now());
  let ended: 'timeout' | 'aborted' | undefined;
  const end = (why: 'timeout' | 'aborted'): void => {
    ended ??= why;
    context.close().catch(() => undefined);
  };
  const timer = setTimeout(() => end('timeout'), left());
  const onAbort = (): void => end('aborted');
  request.signal?.addEventListener('abort', onAbort, { once: true });
  // Cancelled while waiting for a slot or a browser launch: the listener above came too late.
  if (request.signal?.aborted) end('aborted');
  let crashed = false;
  const onCrash = (): void => {
    crashed = true;
  };
  page.on('crash', onCrash);
  let navigations: NavigationTracker | undefined;
  let network: NetworkWatch | undefined;
  let xhr: XhrRecorder | undefined;
  try {
    if (lease.reused) await lease.prepared.session.send('Page.setWebLifecycleState', { state: 'active' });
    const headers = request.headers ?? [];
    const cookieHeader = headers.find(([name]) => name.toLowerCase() === 'cookie')?.[1];
    if (cookieHeader) await context.addCookies(parseCookies(cookieHeader, url));
    const contentType = headers.find(([name]) => name.toLowerCase() === 'content-type');
    const forwarded = headers.filter(([name]) => !['cookie', 'user-agent', 'content-type'].includes(name.toLowerCase()));
    const interception = await lease.prepared.start({
      guard: deps.guard,
      blocked: blockedTypes(request),
      ...(forwarded.length > 0 ? { originHeaders: { origin: url.origin, headers: forwarded } } : {}),
      ...(request.method && request.method !== 'GET'
        ? { navigation: { method: request.method, body: request.body, headers: contentType ? [contentType] : [] } }
        : {}),
    });
    xhr = request.captureXhr ? recordXhr(page, { bodyLimit: limits.xhrBodyLimit, maxEntries: limits.xhrMaxEntries }) : undefined;
    navigations = trackNavigations(page);
    network = watchNetwork(page);
    mark('gate');

    const loaded = page.goto(url.href, { waitUntil: 'domcontentloaded', timeout: left() });
    const response = await Promise.race([loaded, navigations.failure()]).catch((error: unknown) => {
      const refusal = interception.navigationRefusal();
      if (refusal) throw stopWith('target_forbidden', `${refusal.reason} (${refusal.url})`, { url: refusal.url });
      throw navigationError(error, url);
    });
    mark('navigate');
    await navigations.settle(left(), limits.loadGraceMs);
    mark('load');
    // What scripts add after load: taken once nothing that can add content is pending (quiet.ts). `wait`
    // and `wait_for` count toward it: the page is taken when all of them are met.
    // A closed page, a dead browser or a crashed renderer answers nothing more: the settle stops at once.
    const gone = (): boolean => crashed || page.isClosed() || !lease.browserAlive();
    const settled = await settleAfterLoad(lease.prepared.session, page, network, request, limits, left, () => ended !== undefined || gone());
    mark('settle');
    if (gone() && !ended) throw new Error('the page crashed or its browser closed while settling');
    // A wait cut short by the deadline must not end as a success when the deadline's own timer runs late.
    if (Date.now() >= deadline) throw stopWith('timeout', 'the page did not finish rendering in time', { url: url.href });
    const instructionsReport = request.instructions?.length
      ? await runInstructions(page, request.instructions, { budgetMs: Math.min(limits.instructionsBudgetMs, left()), actionTimeoutMs: limits.actionTimeoutMs })
      : undefined;
    await navigations.settle(left(), limits.loadGraceMs);
    const screenshot = request.screenshot ? await takeScreenshot(page, request.screenshot, limits.screenshotMaxHeight, left(), limits.actionTimeoutMs) : undefined;
    const pdf = request.pdf ? await renderPdf(page) : undefined;
    // The page moved itself (meta refresh, location, a form) to an address the policy refuses: answered
    // like a redirect there over HTTP (REQS001, nothing billed), never as Chromium's error page.
    const refusedMove = interception.navigationRefusal();
    if (refusedMove) throw stopWith('target_forbidden', `${refusedMove.reason} (${refusedMove.url})`, { url: refusedMove.url });
    if (page.url().startsWith('chrome-error:')) throw stopWith('navigation_failed', 'the page navigated to an address that could not be loaded', { url: url.href });
    const html = await navigations.content(() => readHtml(lease.prepared.session), left());
    mark('read');
    const records = xhr ? await xhr.finish(Math.min(1_000, left())) : undefined;
    const final = navigations.lastResponse() ?? response;
    return {
      ok: true,
      status: final?.status() ?? 200,
      headers: (await final?.headersArray().catch(() => undefined))?.map(({ name, value }): [string, string] => [name.toLowerCase(), value]) ?? [],
      html,
      finalUrl: page.url(),
      ...(records ? { xhr: records } : {}),
      ...(instructionsReport ? { instructionsReport } : {}),
      ...(screenshot ? { screenshot } : {}),
      ...(pdf ? { pdf } : {}),
      refused: interception.refused,
      blockedCount: interception.blockedCount,
      settledBy: settled.by,
      settleMs: settled.ms,
    };
  } catch (error) {
    if (ended === 'timeout') throw stopWith('timeout', 'the page did not finish rendering in time', { url: url.href });
    if (ended === 'aborted') throw stopWith('aborted', 'the request was cancelled', { url: url.href });
    if (isRenderStop(error)) throw error;
    if (/crash/i.test(messageOf(error))) throw stopWith('browser_crashed', 'the page crashed while rendering', { url: url.href });
    throw error;
  } finally {
    clearTimeout(timer);
    page.off('crash', onCrash);
    request.signal?.removeEventListener('abort', onAbort);
    navigations?.dispose();
    network?.dispose();
    xhr?.dispose();
  }
}

/**
 * The settle after load with the request's `wait` (a least time after load) and `wait_for` (a selector
 * waited for at the same time). When the selector comes after the page was idle, what came with it
 * is settled again.
 */
async function settleAfterLoad(
  session: CDPSession,
  page: Page,
  network: NetworkWatch,
  request: RenderRequest,
  limits: RenderLimits,
  left: () => number,
  stopped: () => boolean,
): Promise<Settled> {
  const started = performance.now();
  const wait = Math.min(request.wait ?? 0, left());
  const options = { stillMs: limits.quietMs, capMs: Math.min(limits.settleCapMs, left()), minMs: wait, stopped };
  // RENDER_QUIET_MS 0: the page is taken at load (after `wait`), nothing pending is looked for.
  const idle = limits.quietMs > 0 ? settle(session, network, options) : page.waitForTimeout(wait).then((): Settled => ({ by: 'idle', ms: wait }));
  if (!request.waitFor) return idle;
  const selector = request.waitFor;
  const waitMs = Math.min(limits.waitForMs, left());
  let found = 0;
  const appeared = page
    .locator(selector)
    .first()
    .waitFor({ state: 'attached', timeout: waitMs })
    .then(() => (found = performance.now()))
    .catch(() => {
      if (stopped()) return;
      throw stopWith('selector_not_found', `No element matched the wait_for selector "${selector.slice(0, 200)}" within ${waitMs} ms.`, { parameter: 'wait_for' });
    });
  const [first] = await Promise.all([idle, appeared]);
  if (found === 0 || found - started <= first.ms || limits.quietMs === 0) return first;
  const again = await settle(session, network, { stillMs: limits.quietMs, capMs: Math.min(limits.settleCapMs, left()), stopped });
  return { by: again.by, ms: Math.round(performance.now() - started) };
}

/** One set-up function per settle cap: the pool serves a context made ahead only to the same set-up (spare.ts). */
const gates = new Map<number, (page: Page) => Promise<RequestGate>>();
function gateFor(settleCapMs: number): (page: Page) => Promise<RequestGate> {
  let gate = gates.get(settleCapMs);
  if (!gate) {
    gate = (page) => installGate(page, settleCapMs);
    gates.set(settleCapMs, gate);
  }
  return gate;
}

/** More origins than this in one render: its context is closed rather than cleared origin by origin. */
const REUSE_MAX_ORIGINS = 20;

/**
 * Readies a context for the next render with the same reuse key: nothing of this render may reach it.
 * The gate refuses everything until the next render starts; cookies go, and so does what every
 * origin the page loaded a document from stored (local and session storage, IndexedDB, caches); the
 * renderer's garbage is collected; the page is frozen, so its scripts stop until the next render
 * navigates it away.
 */
async function readyForReuse(lease: PageLease<RequestGate>): Promise<boolean> {
  const { context, prepared } = lease;
  const origins = prepared.stop();
  if (origins.length > REUSE_MAX_ORIGINS) return false;
  const { session } = prepared;
  await Promise.all([
    context.clearCookies(),
    ...origins.flatMap((origin) => [
      session.send('Storage.clearDataForOrigin', { origin, storageTypes: 'all' }),
      // Session storage belongs to the page, not the context; 'all' above clears it too in Chromium 156, this says so.
      session.send('DOMStorage.clear', { storageId: { securityOrigin: origin, isLocalStorage: false } }),
    ]),
  ]);
  // What earlier documents left in the renderer: V8 rarely collects it on its own, and a reused renderer
  // grew from ≈27 to ≈65 MB over 30 pages; collected here it stays near 30 MB, for ≈10 ms of its CPU.
  await session.send('HeapProfiler.collectGarbage');
  await session.send('Page.setWebLifecycleState', { state: 'frozen' });
  return true;
}

function contextOptions(request: RenderRequest, browser: Browser): BrowserContextOptions {
  const device = DEVICES[request.device ?? 'desktop'];
  const major = browser.version().split('.')[0] ?? '120';
  const userAgent = request.headers?.find(([name]) => name.toLowerCase() === 'user-agent')?.[1] ?? device.ua(major);
  const mobile = request.device === 'mobile';
  return {
    viewport: { width: request.windowWidth ?? device.width, height: request.windowHeight ?? device.height },
    deviceScaleFactor: device.scale,
    isMobile: mobile,
    hasTouch: mobile,
    userAgent,
    locale: 'en-US',
    // Service workers would fetch outside the page's request gate.
    serviceWorkers: 'block',
    acceptDownloads: false,
    ...(request.proxy ? { proxy: { ...request.proxy } } : {}),
  };
}

/** No proxy and no per-caller browser setting: a context for it may be made ahead (see pool.ts). */
function isDefaultConfiguration(request: RenderRequest): boolean {
  return (
    request.proxy === undefined &&
    (request.device ?? 'desktop') === 'desktop' &&
    request.windowWidth === undefined &&
    request.windowHeight === undefined &&
    !request.headers?.some(([name]) => name.toLowerCase() === 'user-agent')
  );
}

function parseCookies(header: string, url: URL): Array<{ name: string; value: string; url: string }> {
  return header
    .split(';')
    .map((pair) => pair.trim())
    .filter((pair) => pair.includes('='))
    .map((pair) => {
      const at = pair.indexOf('=');
      return { name: pair.slice(0, at).trim(), value: pair.slice(at + 1).trim(), url: `${url.origin}/` };
    })
    .filter((cookie) => cookie.name !== '');
}

/**
 * The document as HTML, read in the page's main world over its DevTools session: the same text as
 * `page.content()` without injecting playwright's utility scripts into every page (the costliest step
 * of a simple render).
 */
async function readHtml(session: CDPSession): Promise<string> {
  const { result, exceptionDetails } = await session.send('Runtime.evaluate', {
    expression: '(document.doctype ? new XMLSerializer().serializeToString(document.doctype) : "") + (document.documentElement ? document.documentElement.outerHTML : "")',
    returnByValue: true,
  });
  if (exceptionDetails) throw new Error(exceptionDetails.exception?.description ?? exceptionDetails.text);
  return typeof result.value === 'string' ? result.value : '';
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

function navigationError(error: unknown, url: URL): Error {
  const message = messageOf(error);
  const net = /net::(ERR_[A-Z_]+)/.exec(message)?.[1];
  if (net === 'ERR_NAME_NOT_RESOLVED') return stopWith('dns_failed', `${url.hostname} could not be resolved`, { url: url.href });
  if (net) return stopWith('navigation_failed', `the page could not be loaded (${net})`, { url: url.href });
  if (/Timeout \d+ms exceeded/.test(message)) return stopWith('timeout', 'the page did not load in time', { url: url.href });
  if (/Download is starting/.test(message)) return stopWith('navigation_failed', 'the target answered with a download, not a page', { url: url.href, download: true });
  return error instanceof Error ? error : new Error(message);
}

