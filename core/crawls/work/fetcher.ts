/**
 * How a crawl opens one page. The crawl bills each page as a Fetch request in `mode=auto`: the
 * fetcher asks `afford(credits)` before trying a configuration that costs that much in total, and
 * reports the credits of the configuration that returned the page. `autoPageFetcher` runs the
 * mode=auto ladder through the Fetch pipeline (core/fetch/pipeline.ts, the one place a target is
 * fetched for a caller), whose retrieval passes the installation's host gate and, when asked, the
 * site's robots.txt. An HTML page past the parse caps (its links and kept HTML are parsed) fails
 * before it is billed, as a Fetch of it would (RESP005), so it costs nothing.
 */
import { retryAfterMs } from '../../../engine';
import type { Page } from '../../../engine';
import type { FetchPipeline } from '../../fetch/pipeline';

export { retryAfterMs };

export interface PageFetchRequest {
  url: string;
  signal?: AbortSignal;
  /** Reserve up to `credits` in total for this page; false: the account cannot pay, do not try. */
  afford(credits: number): Promise<boolean>;
  /** The crawl's account: its rendered pages may take turns on a browser context (engine/browser/pool.ts). */
  reuseKey?: string;
  /** Ask the site's robots.txt first: a disallowed page is skipped, not fetched. */
  respectRobots?: boolean;
}

export type PageFetch =
  | (Pick<Page, 'ok' | 'status' | 'headers' | 'body' | 'contentType' | 'html' | 'finalUrl'> & {
      /** Credits of the configuration that returned the page. */
      credits: number;
    })
  /** `robots`: robots.txt disallows the page; it was not fetched. */
  | { ok: false; vetoed: boolean; detail: string; robots?: boolean; kind?: string };

export interface PageFetcher {
  fetch(request: PageFetchRequest): Promise<PageFetch>;
}

/**
 * Pages in mode=auto: the ladder from the cheapest configuration likely to work (remembered per
 * domain), each rung afforded before it is tried, billed at the rung that returned the page. An answer
 * that asks to come back later (`Retry-After`) is returned as is, so the crawl waits instead of paying
 * for a dearer configuration.
 */
export function autoPageFetcher(pipeline: Pick<FetchPipeline, 'retrievePage' | 'refusePage'>): PageFetcher {
  return {
    async fetch({ url, signal, afford, reuseKey, respectRobots }) {
      const result = await pipeline.retrievePage(
        {
          url,
          mode: { kind: 'auto', needsBrowser: false },
          signal,
          ...(reuseKey !== undefined ? { reuseKey } : {}),
          ...(respectRobots ? { respectRobots } : {}),
          acceptAsIs: (page) => retryAfterMs(page.status, page.headers) !== undefined,
        },
        afford,
      );
      if (!result.ok) {
        if (result.error.kind === 'robots_disallowed') return { ok: false, vetoed: false, detail: result.error.detail, robots: true };
        return { ok: false, vetoed: result.vetoed, detail: result.error.detail, kind: result.error.kind };
      }
      const { page, rung } = result;
      // Only a page the crawl keeps is read (an error status fails without being parsed).
      const refused = page.status < 400 ? pipeline.refusePage(page) : undefined;
      if (refused) return { ok: false, vetoed: false, detail: refused.detail };
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
