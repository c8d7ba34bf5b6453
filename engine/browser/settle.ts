/**
 * Waiting for a page to stop navigating. Challenge pages, meta refreshes and script redirects start a
 * new top-level navigation after the first document loaded; the page is taken only once the last of
 * them has loaded (a few rounds at most, within the time left), and reading the HTML is retried when
 * a navigation replaces the document under it.
 */
import type { Page, Request, Response } from 'playwright-core';

const ROUNDS = 5;
/** After the top-level document failed, how long another navigation has to take its place. */
const FAILED_GRACE_MS = 1_000;

export interface NavigationTracker {
  /** Waits until no top-level navigation is in flight and the document in place has loaded. */
  settle(timeoutMs: number, loadGraceMs: number): Promise<void>;
  /** The last top-level document response that was not a redirect (a challenge's reload included). */
  lastResponse(): Response | undefined;
  /** `read()` (the page's HTML), retried across a navigation that replaces the document. */
  content(read: () => Promise<string>, timeoutMs: number): Promise<string>;
  /**
   * Rejects (with Chromium's `net::ERR_…`) when the top-level document failed after its navigation
   * committed and no other navigation took its place: such a page never reaches DOMContentLoaded
   * (a body that cannot be decoded does this), so waiting for it would last until the deadline.
   */
  failure(): Promise<never>;
  /** Stops listening to the page (which may serve another request). */
  dispose(): void;
}

export function trackNavigations(page: Page): NavigationTracker {
  const inFlight = new Set<Request>();
  const idle: Array<() => void> = [];
  const isTopLevel = (request: Request): boolean => request.isNavigationRequest() && request.frame() === page.mainFrame();
  const done = (request: Request): void => {
    if (!inFlight.delete(request) || inFlight.size > 0) return;
    for (const wake of idle.splice(0)) wake();
  };
  let started = 0;
  const onRequest = (request: Request): void => {
    if (!isTopLevel(request)) return;
    inFlight.add(request);
    started++;
  };
  const failures: Array<(error: Error) => void> = [];
  const timers = new Set<NodeJS.Timeout>();
  const onFailed = (request: Request): void => {
    done(request);
    // Another navigation in flight or starting soon (a script redirect) made this one go: not a failure.
    if (!isTopLevel(request) || inFlight.size > 0) return;
    const before = started;
    const error = new Error(request.failure()?.errorText ?? 'net::ERR_FAILED');
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (started === before && inFlight.size === 0) for (const fail of failures.splice(0)) fail(error);
    }, FAILED_GRACE_MS);
    timers.add(timer);
  };
  let last: Response | undefined;
  const onResponse = (response: Response): void => {
    if (isTopLevel(response.request()) && (response.status() < 300 || response.status() >= 400)) last = response;
  };
  page.on('request', onRequest);
  page.on('response', onResponse);
  page.on('requestfinished', done);
  page.on('requestfailed', onFailed);

  const quiet = (ms: number): Promise<void> =>
    inFlight.size === 0
      ? Promise.resolve()
      : new Promise((resolve) => {
          const timer = setTimeout(resolve, ms);
          idle.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });

  return {
    dispose() {
      page.off('request', onRequest);
      page.off('response', onResponse);
      page.off('requestfinished', done);
      page.off('requestfailed', onFailed);
      for (const timer of timers) clearTimeout(timer);
      failures.length = 0;
    },
    failure: () => new Promise<never>((_resolve, reject) => failures.push(reject)),
    lastResponse: () => last,
    async settle(timeoutMs, loadGraceMs) {
      const deadline = Date.now() + timeoutMs;
      for (let round = 0; round < ROUNDS; round++) {
        const left = deadline - Date.now();
        if (left <= 0) return;
        await quiet(left);
        await page.waitForLoadState('load', { timeout: Math.max(1, Math.min(loadGraceMs, deadline - Date.now())) }).catch(() => undefined);
        if (inFlight.size === 0) return;
      }
    },
    async content(read, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (let attempt = 0; ; attempt++) {
        try {
          return await read();
        } catch (error) {
          const navigating = /navigat|execution context/i.test(error instanceof Error ? error.message : String(error));
          if (!navigating || attempt >= ROUNDS || Date.now() >= deadline) throw error;
          await this.settle(deadline - Date.now(), deadline - Date.now());
        }
      }
    },
  };
}
