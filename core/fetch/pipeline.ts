/**
 * One Fetch, from parsed parameters to the shaped answer: the Fetch route, the MCP tools, Batch tasks
 * and crawls all come through here, and only the billing strategy differs (a held reservation for a
 * Fetch call, credits afforded per configuration for Batch tasks and crawl pages):
 *
 *   recipe check (extract: REQS007/REQS004) ─> billing.open (first configuration's price)
 *     ─> retrievePage (fixed configuration, or mode=auto asking billing.afford per rung)
 *     ─> target status (RESP002 / RESP001 unless passed through) ─> shape ─> billing.settle
 *
 * `retrievePage` is the single place a target URL is fetched for a caller; crawls take its page as is.
 * Refusals before anything is fetched are thrown (ApiError); what the fetch came to is returned as a
 * value, with whether another attempt may succeed, for the callers that retry (Batch tasks).
 */
import { failureOf, type Page, type Retrieval, type RetrievalError, type RetrievalMode, type Rung } from '../../engine';
import { isApiError, problem, type ApiError } from '../../base/errors';
import { costOf } from '../pricing';
import type { RecipeCache } from '../extract/recipes';
import { recipeForRequest, shapeExtract } from './extract';
import type { FetchParams } from './params';
import { answerStatus, shapeResponse, targetStatusError, type Shaped } from './respond';
import { isTransientStatus } from '../jobs/retry-rules';
import type { DocumentPool } from '../../engine';
import { shapeDocument } from '../documents/fetch';

/** How a Fetch is paid; the strategy is the caller's. */
export interface FetchBilling {
  /** Before anything is fetched, with the first configuration's price: reserve it, or throw the refusal. */
  open(credits: number): Promise<void>;
  /** Before a configuration costing `credits` in total is tried; false: it is not tried. */
  afford(credits: number): Promise<boolean>;
  /** The page came back: bill the configuration that returned it. */
  settle(credits: number): Promise<void>;
  /** Last, always: give back whatever was reserved and not settled. */
  close(): Promise<void>;
}

/** What to fetch: the parsed parameters plus what the caller's transport adds. */
export interface FetchJob {
  params: FetchParams;
  method?: 'GET' | 'POST' | 'PUT';
  /** Headers forwarded to the target. */
  headers?: Array<[string, string]>;
  body?: Buffer;
  /** Aborted when the caller goes away. */
  signal?: AbortSignal;
  /** Whose rendered pages may share a browser context (engine/browser/pool.ts). */
  reuseKey?: string;
  /** Longest wait for a host its 429/503 answers paused (engine/politeness); unset: as long as the pause. */
  maxHostPauseMs?: number;
}

export type RetrievedPage =
  | { ok: true; page: Page; rung: Rung }
  /** `vetoed`: the ladder stopped because billing refused a configuration. */
  | { ok: false; error: RetrievalError; vetoed: boolean };

export type FetchResult =
  | { ok: true; shaped: Shaped; cost: number; page: Page; rung: Rung; extractWarning?: string }
  | {
      ok: false;
      error: ApiError;
      /** Billing refused the configuration the page needed. */
      vetoed: boolean;
      /** Another attempt later may succeed (a time-out, a block, a rate limit or a server error of the target). */
      retryable: boolean;
      /** The service gave the fetch up itself (cancelled, shutting down): not the target's outcome. */
      interrupted: boolean;
      /** The page and configuration, when the target answered (a status that is an error). */
      page?: Page;
      rung?: Rung;
    };

export function modeOf(params: Pick<FetchParams, 'auto' | 'needsBrowser' | 'jsRender' | 'premiumProxy'>): RetrievalMode {
  return params.auto ? { kind: 'auto', needsBrowser: params.needsBrowser } : { kind: 'fixed', jsRender: params.jsRender, premiumProxy: params.premiumProxy };
}

/** Credits reserved up front: the configuration's price, or under mode=auto the first rung's. */
export const firstCost = (params: FetchParams): number => (params.auto ? costOf({ jsRender: params.needsBrowser, premiumProxy: false }) : costOf(params));

export const retrievalProblem = (error: RetrievalError): ApiError =>
  problem(error.code, error.detail, error.parameter ? { members: { parameter: error.parameter } } : {});


export interface FetchPipeline {
  /** The page as the target gave it, each configuration afforded first. */
  retrievePage(request: RetrievePageRequest, afford: (credits: number) => Promise<boolean>): Promise<RetrievedPage>;
  /** A whole Fetch: recipe, billing, retrieval, target status, shape. */
  run(job: FetchJob, billing: FetchBilling): Promise<FetchResult>;
}

export interface RetrievePageRequest {
  url: string;
  mode: RetrievalMode;
  method?: 'GET' | 'POST' | 'PUT';
  headers?: Array<[string, string]>;
  body?: Buffer;
  proxyCountry?: string;
  sessionId?: number;
  browser?: FetchParams['browser'];
  signal?: AbortSignal;
  reuseKey?: string;
  /** Ask the site's robots.txt first: a disallowed URL fails with `robots_disallowed`, nothing fetched. */
  respectRobots?: boolean;
  /** An answer to return as it is, without escalating (a crawl's `Retry-After`). */
  acceptAsIs?: (page: Page) => boolean;
}

export function createFetchPipeline(deps: { retrieval: Retrieval; recipes?: RecipeCache; documents?: DocumentPool }): FetchPipeline {
  const retrievePage: FetchPipeline['retrievePage'] = async (request, afford) => {
    let vetoed = false;
    const result = await deps.retrieval.retrieve({
      ...request,
      beforeRung: async (rung) => {
        const affordable = await afford(rung.cost);
        vetoed ||= !affordable;
        return affordable;
      },
    });
    if (!result.ok) return { ok: false, error: result.error, vetoed: vetoed && result.error.kind === 'vetoed' };
    return { ok: true, page: result.page, rung: result.rung };
  };

  return {
    retrievePage,
    async run(job, billing) {
      const { params } = job;
      let recipe;
      if (params.extract) {
        if (!deps.recipes) throw problem('REQS004', 'extract is not available here.', { members: { parameter: 'extract' } });
        recipe = await recipeForRequest(deps.recipes, params);
      }
      await billing.open(firstCost(params));
      try {
        const retrieved = await retrievePage(
          {
            url: params.url.href,
            mode: modeOf(params),
            method: job.method ?? 'GET',
            headers: job.headers ?? [],
            ...(job.body ? { body: job.body } : {}),
            proxyCountry: params.proxyCountry,
            sessionId: params.sessionId,
            browser: params.browser,
            signal: job.signal,
            reuseKey: job.reuseKey,
            ...(params.respectRobots ? { respectRobots: true } : {}),
            ...(job.maxHostPauseMs !== undefined ? { maxHostPauseMs: job.maxHostPauseMs } : {}),
          },
          (credits) => billing.afford(credits),
        );
        if (!retrieved.ok) {
          const { kind } = retrieved.error;
          return {
            ok: false,
            error: retrievalProblem(retrieved.error),
            vetoed: retrieved.vetoed,
            // A time-out, a connection or a block may not happen again; a refused target or a bad parameter will.
            retryable: !retrieved.vetoed && failureOf(kind).retry,
            interrupted: !retrieved.vetoed && !failureOf(kind).final,
          };
        }
        const { page, rung } = retrieved;
        const statusError = targetStatusError(page, params);
        if (statusError) return { ok: false, error: statusError, vetoed: false, retryable: isTransientStatus(page.status), interrupted: false, page, rung };
        // Documents (core/documents/fetch.ts): shaped and priced by their pages; a failure is never charged.
        const document = deps.documents && !recipe ? await shapeDocument(deps.documents, page, params) : null;
        if (document && !document.ok) return { ok: false, error: document.error, vetoed: false, retryable: document.retryable, interrupted: false, page, rung };
        let shaped: Shaped;
        let extractWarning: string | undefined;
        try {
          if (recipe) {
            const extracted = shapeExtract(page, params, recipe, answerStatus(page, params), rung.engine === 'rendered');
            extractWarning = extracted.warning;
            if (extracted.stale) await deps.recipes?.reportStale(recipe.domain);
            shaped = { status: extracted.status, contentType: extracted.contentType, body: extracted.body };
          } else {
            shaped = document ? document.shaped : shapeResponse(page, params);
          }
        } catch (error) {
          // A page no recipe role recognises (REQS007): the target answered, so its page goes with the refusal.
          if (!isApiError(error)) throw error;
          return { ok: false, error, vetoed: false, retryable: false, interrupted: false, page, rung };
        }
        const cost = rung.cost + (document?.surcharge ?? 0);
        if (cost > rung.cost && !(await billing.afford(cost))) {
          return { ok: false, error: problem('AUTH004', `Not enough credits for the document's ${document?.document?.pages ?? 0} pages (${cost} credits).`), vetoed: true, retryable: false, interrupted: false, page, rung };
        }
        await billing.settle(cost);
        return { ok: true, shaped, cost, page, rung, ...(extractWarning ? { extractWarning } : {}) };
      } finally {
        await billing.close();
      }
    },
  };
}
