/**
 * After the document loaded, what scripts still add: the page is taken once it has been quiet for a
 * short window, or when the cap after load is reached. Quiet means, together:
 * - no DOM change in the main frame (nodes added or removed, text changed; attribute and style changes
 *   are not content, so CSS and script animations do not count);
 * - no short one-shot timer pending (a `setTimeout` of at most TIMER_HORIZON_MS set by the page, not
 *   from inside another timer: content shown "in a moment" is waited for, polling loops are not);
 * - no request in flight of the kinds that feed content (document, script, stylesheet, fetch, XHR),
 *   leaving out requests pending longer than LONG_REQUEST_MS (long polls) and addresses requested again
 *   and again (beacon and polling loops). Blocked requests end at once and so never count.
 * `settledBy` says which ended the wait: `quiet`, or `cap` for pages that never were.
 */
import type { Page, Request } from 'playwright-core';

export type SettledBy = 'quiet' | 'cap';

const TIMER_HORIZON_MS = 2_000;
const LONG_REQUEST_MS = 1_000;
/** An address requested this often during one render is a loop, not content on its way. */
const RECURRING = 3;
const POLL_MS = 50;
const CONTENT_KINDS = new Set(['document', 'script', 'stylesheet', 'fetch', 'xhr']);

/** Installed in every page before its scripts run (an init script): DOM changes and short timers of the top frame. */
export const QUIET_PROBE = `(() => {
  if (window !== window.top || Object.prototype.hasOwnProperty.call(window, '__fetchplaneQuiet')) return;
  const nativeSet = window.setTimeout, nativeClear = window.clearTimeout, now = () => performance.now();
  const pending = new Set();
  let inTimer = 0;
  const state = { last: now(), pending: () => pending.size };
  Object.defineProperty(window, '__fetchplaneQuiet', { value: state });
  window.setTimeout = function setTimeout(handler, delay, ...args) {
    if (typeof handler !== 'function') return nativeSet.call(window, handler, delay, ...args);
    const tracked = inTimer === 0 && (Number(delay) || 0) <= ${TIMER_HORIZON_MS};
    const id = nativeSet.call(window, function () {
      pending.delete(id);
      inTimer++;
      try { return handler.apply(this, args); } finally { inTimer--; if (tracked) state.last = now(); }
    }, delay);
    if (tracked) pending.add(id);
    return id;
  };
  window.clearTimeout = function clearTimeout(id) { pending.delete(id); return nativeClear.call(window, id); };
  new MutationObserver(() => { state.last = now(); }).observe(document, { childList: true, subtree: true, characterData: true });
})();`;

const READ_PROBE = `(() => {
  const state = window.__fetchplaneQuiet;
  return state ? { since: performance.now() - state.last, timers: state.pending() } : { since: Number.MAX_SAFE_INTEGER, timers: 0 };
})()`;

export interface QuietOptions {
  /** How long the page must stay quiet. */
  quietMs: number;
  /** Longest wait after load. */
  capMs: number;
}

export interface NetworkWatch {
  /** Requests that still count, and the time of the last one that started or ended. */
  busy(now: number): { inFlight: number; lastActivity: number };
  dispose(): void;
}

/** Starts counting the page's content requests (before the navigation, so its own requests count). */
export function watchNetwork(page: Page): NetworkWatch {
  const started = new Map<Request, number>();
  const seen = new Map<string, number>();
  let lastActivity = performance.now();
  const isTop = (request: Request) => request.isNavigationRequest() && request.frame() === page.mainFrame();
  const onRequest = (request: Request): void => {
    if (!CONTENT_KINDS.has(request.resourceType()) || isTop(request)) return;
    const address = request.url().split(/[?#]/)[0] ?? '';
    const count = (seen.get(address) ?? 0) + 1;
    seen.set(address, count);
    if (count >= RECURRING) return;
    started.set(request, performance.now());
    lastActivity = performance.now();
  };
  const onEnd = (request: Request): void => {
    if (started.delete(request)) lastActivity = performance.now();
  };
  page.on('request', onRequest);
  page.on('requestfinished', onEnd);
  page.on('requestfailed', onEnd);
  return {
    busy(now) {
      let inFlight = 0;
      for (const at of started.values()) if (now - at < LONG_REQUEST_MS) inFlight++;
      return { inFlight, lastActivity };
    },
    dispose() {
      page.off('request', onRequest);
      page.off('requestfinished', onEnd);
      page.off('requestfailed', onEnd);
    },
  };
}

/** Waits until the page is quiet or the cap is reached. */
export async function waitQuiet(page: Page, network: NetworkWatch, options: QuietOptions): Promise<SettledBy> {
  const start = performance.now();
  for (;;) {
    const now = performance.now();
    const probe = await page
      .evaluate<{ since: number; timers: number }>(READ_PROBE)
      // A document being replaced answers nothing: that is activity.
      .catch(() => ({ since: 0, timers: 1 }));
    const { inFlight, lastActivity } = network.busy(now);
    if (probe.since >= options.quietMs && probe.timers === 0 && inFlight === 0 && now - lastActivity >= options.quietMs) return 'quiet';
    if (now - start >= options.capMs) return 'cap';
    await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, Math.max(1, options.capMs - (now - start)))));
  }
}
