/**
 * One Fetch, from parsed parameters to the shaped answer: the Fetch route, the MCP tools, Batch tasks
 * and crawls all come through here, and only the billing strategy differs (a held reservation for a
 * Fetch call, credits afforded per configuration for Batch tasks and crawl pages):
 *
 *   recipe check (extract: REQS007/REQS004) ─> billing.open (first configuration's price)
 *     ─> retrievePage (fixed configuration, or mode=auto asking billing.afford per rung)
 *     ─> target status (RESP002 / RESP001 unless passed through) ─> shape ─> billing.settle
 *
 * Renders go with the account's terms (render-rules.ts, the account being `reuseKey`): its share of
 * the browser's pages, and a refusal (429 naming `deadline_renders`) once its renders ran to the
 * deadline as often as its plan allows in the window; a render that does is counted, not charged.
 * Likewise, where `pages` is given (the API), a page refused at a parse cap is counted (page-rules.ts),
 * and past the plan's `capped_pages` in the window the account's requests whose outputs parse the page
 * are refused (429 naming `capped_pages`) before anything is fetched.
 * Shaping comes before the charge is settled: a page an HTML output refuses (past a parse cap or a
 * worker thread's budget: RESP005) is answered as a failure and its reservation given back, so it costs
 * nothing, on every surface. Crawl pages, billed by their slice, ask `refusePage` before they are billed.
 *
 * `retrievePage` is the single place a target URL is fetched for a caller; crawls take its page as is.
 * Refusals before anything is fetched are thrown (ApiError); what the fetch came to is returned as a
 * value, with whether another attempt may succeed, for the callers that retry (Batch tasks).
 */
import { decodeHtml, DETECT_SCANNED_BYTES, FAILURES, failureOf, HtmlRefused, isHtml, isHtmlRefused, type BodyCheck, type HtmlLimit, type HtmlOutputs, type Page, type Park, type Retrieval, type RetrievalError, type RetrievalMode, type Rung } from '../../engine';
import { isApiError, problem, type ApiError } from '../../base/errors';
import { costOf } from '../pricing';
import type { RecipeCache, RecipeDoc } from '../extract/recipes';
import { recipeForRequest, shapeExtract } from './extract';
import type { FetchParams } from './params';
import { answerStatus, htmlProblem, isShapedStatus, parsesPage, shapeResponse, targetStatusError, type Shaped } from './respond';
import { isTransientStatus } from '../jobs/retry-rules';
import type { RenderRules } from './render-rules';
import type { PageRules } from './page-rules';
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
  /** Longest wait for a host's turn, every wait together (engine/politeness); unset: as long as it takes. */
  maxHostWaitMs?: number;
  /** Waits at hosts run inside it, so the caller's shared slots are given back meanwhile (Batch tasks). */
  park?: Park;
  /** Run on the answer before billing settles (change tracking, core/changes): its answer goes out; a throw charges nothing. */
  beforeSettle?: (done: FetchDone) => Promise<Shaped>;
}

/** A Fetch's page and answer, before it is billed. */
export interface FetchDone {
  page: Page;
  rung: Rung;
  shaped: Shaped;
  recipe?: RecipeDoc;
}

export type RetrievedPage =
  | { ok: true; page: Page; rung: Rung }
  /**
   * `vetoed`: the ladder stopped because billing refused a configuration. `refusal`: the account's
   * render terms refused a render (render-rules.ts), the problem to answer with.
   */
  | { ok: false; error: RetrievalError; vetoed: boolean; refusal?: ApiError };

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
  /** An HTML page past the parse caps, refused (RESP005) before it is billed: crawl pages, whose links and kept HTML are parsed. */
  refusePage(page: Pick<Page, 'body' | 'contentType' | 'html'>): ApiError | undefined;
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
  /** The caller's account: whose rendered pages may share a browser context, and whose render terms apply. */
  reuseKey?: string;
  /** Ask the site's robots.txt first: a disallowed URL fails with `robots_disallowed`, nothing fetched. */
  respectRobots?: boolean;
  /** An answer to return as it is, without escalating (a crawl's `Retry-After`). */
  acceptAsIs?: (page: Page) => boolean;
  maxHostWaitMs?: number;
  park?: Park;
  /** Watches a plain fetch's body as it is downloaded; a page it refuses comes back with `refused`. */
  pageCheck?: BodyCheck;
}

export function createFetchPipeline(deps: { retrieval: Retrieval; recipes?: RecipeCache; html: HtmlOutputs; renders?: RenderRules; pages?: PageRules; documents?: DocumentPool }): FetchPipeline {
  const retrievePage: FetchPipeline['retrievePage'] = async (request, afford) => {
    const account = request.reuseKey;
    const rules = account === undefined ? undefined : deps.renders;
    const mayRender = request.mode.kind === 'auto' || request.mode.jsRender;
    const renderPages = rules && account !== undefined && mayRender ? await rules.pagesOf(account) : undefined;
    let vetoed = false;
    let refusal: ApiError | undefined;
    const result = await deps.retrieval.retrieve({
      ...request,
      ...(renderPages !== undefined ? { renderPages } : {}),
      beforeRung: async (rung) => {
        if (rules && account !== undefined && rung.engine === 'rendered') {
          refusal = await rules.refusal(account);
          if (refusal) return false;
        }
        const affordable = await afford(rung.cost);
        vetoed ||= !affordable;
        return affordable;
      },
    });
    if (!result.ok) {
      if (refusal && result.error.kind === 'vetoed') {
        const error: RetrievalError = { kind: 'renders_throttled', code: FAILURES.renders_throttled.code, detail: refusal.detail };
        return { ok: false, error, vetoed: false, refusal };
      }
      if (rules && account !== undefined) await rules.failed(account, result.error);
      return { ok: false, error: result.error, vetoed: vetoed && result.error.kind === 'vetoed' };
    }
    return { ok: true, page: result.page, rung: result.rung };
  };

  return {
    retrievePage,
    refusePage(page) {
      if (!isHtml({ ...(page.contentType ? { contentType: page.contentType } : {}), body: page.body, rendered: page.html !== undefined })) return undefined;
      const refused = deps.html.check(page.html ?? decodeHtml(page.body, page.contentType));
      return refused ? htmlProblem(refused) : undefined;
    },
    async run(job, billing) {
      const { params } = job;
      let recipe;
      if (params.extract) {
        if (!deps.recipes) throw problem('REQS004', 'extract is not available here.', { members: { parameter: 'extract' } });
        recipe = await recipeForRequest(deps.recipes, params);
      }
      const parses = parsesPage(params, recipe !== undefined);
      // The account whose capped pages count (page-rules.ts): only where its outputs parse the page.
      const counted = parses ? job.reuseKey : undefined;
      const refusal = counted !== undefined ? await deps.pages?.refusal(counted) : undefined;
      if (refusal) throw refusal;
      const capped = async (limit: HtmlLimit): Promise<void> => {
        if (counted !== undefined) await deps.pages?.refused(counted, limit);
      };
      await billing.open(firstCost(params));
      // A page the outputs will parse is held to the parse caps while it downloads: past one, the rest is never read.
      const caps = parses ? deps.html.pageCheck(DETECT_SCANNED_BYTES) : undefined;
      const pageCheck: BodyCheck | undefined = caps && { start: (answer) => (isShapedStatus(answer.status, params) ? caps.start(answer) : undefined) };
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
            ...(job.maxHostWaitMs !== undefined ? { maxHostWaitMs: job.maxHostWaitMs } : {}),
            ...(job.park ? { park: job.park } : {}),
            ...(pageCheck ? { pageCheck } : {}),
          },
          (credits) => billing.afford(credits),
        );
        if (!retrieved.ok) {
          const { kind } = retrieved.error;
          if (retrieved.refusal) return { ok: false, error: retrieved.refusal, vetoed: false, retryable: failureOf(kind).retry, interrupted: false };
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
        // Refused while it downloaded (the same refusal the outputs would give the whole page): nothing is settled, so nothing is charged.
        if (page.refused) {
          await capped(page.refused.cap);
          return { ok: false, error: htmlProblem(new HtmlRefused(page.refused.cap, page.refused.limit)), vetoed: false, retryable: false, interrupted: false, page, rung };
        }
        // Documents (core/documents/fetch.ts): shaped and priced by their pages; a failure is never charged.
        const document = deps.documents && !recipe ? await shapeDocument(deps.documents, deps.html, page, params, job.signal) : null;
        if (document && !document.ok) return { ok: false, error: document.error, vetoed: false, retryable: document.retryable, interrupted: false, page, rung };
        let shaped: Shaped;
        let extractWarning: string | undefined;
        try {
          if (recipe) {
            const extracted = await shapeExtract(page, params, recipe, answerStatus(page, params), rung.engine === 'rendered', deps.html, job.signal);
            extractWarning = extracted.warning;
            if (extracted.stale) await deps.recipes?.reportStale(recipe.domain);
            shaped = { status: extracted.status, contentType: extracted.contentType, body: extracted.body };
          } else {
            shaped = document ? document.shaped : await shapeResponse(page, params, deps.html, job.signal);
          }
          if (job.beforeSettle) shaped = await job.beforeSettle({ page, rung, shaped, ...(recipe ? { recipe } : {}) });
        } catch (error) {
          // A page past a parse cap or budget (RESP005), or no recipe role recognises (REQS007): the target
          // answered, so its page goes with the refusal; nothing is settled, so nothing is charged.
          if (isHtmlRefused(error)) {
            await capped(error.limit);
            const busy = error.limit === 'busy';
            return { ok: false, error: htmlProblem(error), vetoed: false, retryable: busy, interrupted: false, page, rung };
          }
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
