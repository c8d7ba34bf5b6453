/**
 * How a crawl opens one page. The crawl bills each page as a Fetch request in `mode=auto`: the
 * fetcher asks `afford(credits)` before trying a configuration that costs that much in total, and
 * reports the credits of the configuration that returned the page. The plain fetcher below is the
 * first rung only (1 credit); `autoPageFetcher` runs the mode=auto ladder through the Fetch pipeline
 * (core/fetch/pipeline.ts, the one place a target is fetched for a caller), which is what workers use.
 */
import type { FetchEngine } from '../../engine';
import type { Page } from '../../engine';
import type { FetchPipeline } from '../../core/fetch/pipeline';

export interface PageFetchRequest {
  url: string;
  signal?: AbortSignal;
  /** Reserve up to `credits` in total for this page; false: the account cannot pay, do not try. */
  afford(credits: number): Promise<boolean>;
  /** The crawl's account: its rendered pages may take turns on a browser context (engine/browser/pool.ts). */
  reuseKey?: string;
}

export type PageFetch =
  | (Pick<Page, 'ok' | 'status' | 'headers' | 'body' | 'contentType' | 'html' | 'finalUrl'> & {
      /** Credits of the configuration that returned the page. */
      credits: number;
    })
  | { ok: false; vetoed: boolean; detail: string };

export interface PageFetcher {
  fetch(request: PageFetchRequest): Promise<PageFetch>;
}

export function plainPageFetcher(engine: FetchEngine): PageFetcher {
  return {
    async fetch({ url, signal, afford }) {
      if (!(await afford(1))) return { ok: false, vetoed: true, detail: 'The account has no credits left for this page.' };
      const result = await engine.fetch({ url }, signal);
      if (!result.ok) return { ok: false, vetoed: false, detail: result.error.detail };
      return {
        ok: true,
        status: result.status,
        headers: result.headers,
        body: result.body,
        ...(result.contentType ? { contentType: result.contentType } : {}),
        finalUrl: result.finalUrl,
        credits: 1,
      };
    },
  };
}

/**
 * Pages in mode=auto: the ladder from the cheapest configuration likely to work (remembered per
 * domain), each rung afforded before it is tried, billed at the rung that returned the page. An answer
 * that asks to come back later (`Retry-After`) is returned as is, so the crawl waits instead of paying
 * for a dearer configuration.
 */
export function autoPageFetcher(pipeline: Pick<FetchPipeline, 'retrievePage'>): PageFetcher {
  return {
    async fetch({ url, signal, afford, reuseKey }) {
      const result = await pipeline.retrievePage(
        {
          url,
          mode: { kind: 'auto', needsBrowser: false },
          signal,
          ...(reuseKey !== undefined ? { reuseKey } : {}),
          acceptAsIs: (page) => retryAfterMs(page.status, page.headers) !== undefined,
        },
        afford,
      );
      if (!result.ok) return { ok: false, vetoed: result.vetoed, detail: result.error.detail };
      const { page, rung } = result;
      return {
        ok: true,
        status: page.status,
        headers: page.headers,
        body: page.body,
        ...(page.contentType ? { contentType: page.contentType } : {}),
        ...(page.html !== undefined ? { html: page.html } : {}),
        finalUrl: page.finalUrl,
        credits: rung.cost,
      };
    },
  };
}

/** Billing of a fetched page: 2xx/3xx kept; 404 and 410 billed but failed; other statuses failed and free. */
export function billingOf(status: number): { billable: boolean; failed: boolean } {
  if (status < 400) return { billable: true, failed: false };
  if (status === 404 || status === 410) return { billable: true, failed: true };
  return { billable: false, failed: true };
}

/** `Retry-After` in milliseconds (seconds or an HTTP date), when the answer asks to come back later. */
export function retryAfterMs(status: number, headers: Array<[string, string]>, now: number = Date.now()): number | undefined {
  if (status !== 429 && status !== 503) return undefined;
  const value = headers.find(([name]) => name.toLowerCase() === 'retry-after')?.[1]?.trim();
  if (!value) return undefined;
  if (/^\d{1,7}$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
