/**
 * After the document loaded, what the page's own work still adds: the page is taken as soon as nothing
 * that can add content is pending and the DOM has been still for a short window, or at the cap after
 * load. Pending, together:
 * - in the page (pending-probe.ts, an init script): timers due within the cap, short intervals' first
 *   runs, animation-frame chains that change the DOM; the still window restarts at each DOM change of
 *   the main frame made by counted work, the parser or a network callback;
 * - on the protocol (here): requests in flight of the kinds that feed content (document, script, fetch,
 *   XHR), leaving out requests pending longer than LONG_REQUEST_MS (long polls) and addresses requested
 *   again and again (beacon and polling loops). Blocked requests end at once and so never count.
 * A page with nothing pending at load is taken at load. `wait` is a least time after load that the
 * settle counts toward, not a wait added after it. `settledBy` says what ended it: `idle`, or `cap`.
 */
import type { CDPSession, Page, Request } from 'playwright-core';
import { PROBE_GLOBAL } from './pending-probe';

export type SettledBy = 'idle' | 'cap';

/** Content that arrives within 1.5 s of load is waited for; a request pending longer is a long poll. */
const LONG_REQUEST_MS = 1_500;
/** An address requested this often during one render is a loop, not content on its way. */
const RECURRING = 3;
const CONTENT_KINDS = new Set(['document', 'script', 'fetch', 'xhr']);
/** While the document is being replaced the probe cannot answer: looked at again after this. */
const RETRY_MS = 20;

export interface SettleOptions {
  /** How long the DOM must have been still (and the network quiet) with nothing pending. */
  stillMs: number;
  /** Longest wait after load (past `minMs`). */
  capMs: number;
  /** Least time after load before the page is taken (`wait`). */
  minMs?: number;
  /** True once the render ended under the settle (deadline, cancel): it stops at once. */
  stopped?: () => boolean;
}

export interface Settled {
  by: SettledBy;
  /** Milliseconds from load to the page being taken. */
  ms: number;
}

export interface NetworkWatch {
  /** Requests that still count, the age of the oldest of them, and the time of the last one that started or ended. */
  busy(now: number): { inFlight: number; oldest: number; lastActivity: number };
  /** Resolves when the counted requests may have changed (one ended), or after `ms`. */
  change(ms: number): Promise<void>;
  dispose(): void;
}

/** Starts counting the page's content requests (before the navigation, so its own requests count). */
export function watchNetwork(page: Page): NetworkWatch {
  const started = new Map<Request, number>();
  const seen = new Map<string, number>();
  const wakers = new Set<() => void>();
  let lastActivity = -Infinity;
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
    if (!started.delete(request)) return;
    lastActivity = performance.now();
    for (const wake of wakers) wake();
  };
  page.on('request', onRequest);
  page.on('requestfinished', onEnd);
  page.on('requestfailed', onEnd);
  return {
    busy(now) {
      let inFlight = 0;
      let oldest = 0;
      for (const at of started.values()) {
        if (now - at >= LONG_REQUEST_MS) continue;
        inFlight++;
        oldest = Math.max(oldest, now - at);
      }
      return { inFlight, oldest, lastActivity };
    },
    change(ms) {
      return new Promise((resolve) => {
        const wake = (): void => {
          clearTimeout(timer);
          wakers.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, Math.max(1, ms));
        wakers.add(wake);
      });
    },
    dispose() {
      page.off('request', onRequest);
      page.off('requestfinished', onEnd);
      page.off('requestfailed', onEnd);
      for (const wake of wakers) wake();
    },
  };
}

interface ProbeAnswer {
  idle: boolean;
  pending: number;
  since: number;
}

/** Asks the page's probe to answer once it is idle and still, or after `maxMs`; undefined while no document answers. */
async function askPage(session: CDPSession, stillMs: number, maxMs: number): Promise<ProbeAnswer | undefined> {
  const expression = `(() => { const probe = window.${PROBE_GLOBAL}; return probe ? probe.wait(${stillMs}, ${Math.max(0, Math.round(maxMs))}) : { idle: true, pending: 0, since: 1e9 }; })()`;
  try {
    const { result, exceptionDetails } = await session.send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true });
    return exceptionDetails ? undefined : (result.value as ProbeAnswer);
  } catch {
    return undefined;
  }
}

const SLICE_MS = 50;

/** Sleeps `ms`, in slices, ending early once `stopped()` says the render is over. */
async function pause(ms: number, stopped: () => boolean): Promise<void> {
  for (let end = performance.now() + ms, left = ms; left > 0 && !stopped(); left = end - performance.now()) {
    await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.min(SLICE_MS, left))));
  }
}

/**
 * Waits, from load, until nothing that can add content is pending, the DOM and the network have been
 * still for `stillMs` and `minMs` has passed, or until the cap.
 */
export async function settle(session: CDPSession, network: NetworkWatch, options: SettleOptions): Promise<Settled> {
  const start = performance.now();
  const least = start + (options.minMs ?? 0);
  const end = Math.max(least, start + options.capMs);
  const done = (by: SettledBy): Settled => ({ by, ms: Math.round(performance.now() - start) });
  const stopped = options.stopped ?? (() => false);
  for (;;) {
    const left = end - performance.now();
    if (left <= 0 || stopped()) return done('cap');
    const page = await askPage(session, options.stillMs, left);
    const now = performance.now();
    const net = network.busy(now);
    const netStill = now - net.lastActivity;
    if (page?.idle && net.inFlight === 0 && netStill >= options.stillMs && now >= least) return done('idle');
    if (now >= end) return done('cap');
    if (!page) await pause(Math.min(RETRY_MS, end - now), stopped);
    else if (net.inFlight > 0) await network.change(Math.min(end - now, LONG_REQUEST_MS - net.oldest));
    else if (netStill < options.stillMs) await pause(Math.min(options.stillMs - netStill, end - now), stopped);
    else if (page.idle) await pause(Math.min(least - now, end - now), stopped);
    // Not idle in the page: the next question waits in the page for it.
  }
}
