/**
 * One page of a check: fetched like a Batch task (the Fetch schema, pipeline and shaping; billing is
 * the caller's `afford`), recorded under the monitor's tag of change tracking with its diff, which
 * the check keeps for its event. At the baseline the page is fetched once more a moment earlier and
 * not billed: the two fetches teach the URL's noise at once (core/changes `probe`), so the next check
 * does not report a generation time or a token as a change.
 *
 * `extract` is Fetch's (the recipe of the page's registrable domain, free on top of the fetch): its
 * `parsed` fields are compared one by one. A page of a domain not prepared yet is fetched and compared
 * without them (a check prepares nothing: preparation spends one of the account's monthly slots, which
 * only POST /v1/extract/prepared-domains does); once the domain is ready the last version's fields are
 * read from its stored page with the recipe, so the first field diff is right. What the recipe refuses
 * (an unknown field, a page of no prepared kind) fails the page, uncharged, as it fails a Fetch.
 * `main_content`: the text compared is the page's main content.
 */
import { isApiError, type ApiError } from '../../base/errors';
import { decodeHtml, registrableDomainOf, type HtmlOutputs } from '../../engine';
import type { RecipeCache } from '../extract/recipes';
import { recordFetched, type ChangeRecorder, type PendingRecord, type Recorded } from '../changes';
import { affordCredits } from '../fetch/billing';
import type { FetchBilling, FetchDone, FetchJob, FetchPipeline, FetchResult } from '../fetch/pipeline';
import { parseTaskParams } from '../fetch/task';
import type { FetchParams } from '../fetch/params';
import { monitorTag, type MonitorOutputs } from './store';

export interface PageCheckDeps {
  pipeline: FetchPipeline;
  recorder: ChangeRecorder;
  /** The HTML outputs: the field outputs a page is compared on are read with them. */
  outputs: HtmlOutputs;
  /** Extract's recipes (the pipeline's): whether a page's domain is prepared yet. */
  recipes: Pick<RecipeCache, 'recipeFor'>;
}

export interface PageRequest {
  accountId: string;
  monitorId: string;
  url: string;
  outputs: MonitorOutputs;
  /** This page's name in its check: a retried attempt finds the version it stored. */
  origin: string;
  baseline: boolean;
  /** A crawl-based monitor asks the site's robots.txt first, as crawls do: a disallowed page is not fetched. */
  respectRobots?: boolean;
  signal: AbortSignal;
  /** The page's track read already begun (with the rest of its part), else begun here. */
  pending?: PendingRecord;
  afford(credits: number): Promise<boolean>;
}

export type PageOutcome =
  | { ok: true; recorded: Recorded; credits: number; html: string; finalUrl: string }
  | { ok: false; status?: number; code: string; detail: string; retryable: boolean; interrupted: boolean };

/** The page's Fetch parameters; `extract` only once its domain is prepared (`prepared`). */
export function paramsOf(monitorId: string, url: string, outputs: MonitorOutputs, respectRobots = false, prepared = true): FetchParams {
  const params = parseTaskParams(url, {
    track_changes: 'true',
    ...(respectRobots ? { respect_robots: 'true' } : {}),
    change_tracking_tag: monitorTag(monitorId),
    ...(outputs.css_extractor ? { css_extractor: JSON.stringify(outputs.css_extractor) } : {}),
  });
  // Not a task parameter (parseTaskParams refuses it): a monitor's is checked when it is made.
  const extract = prepared ? outputs.extract : undefined;
  return extract ? { ...params, extract: extract.mode, ...(extract.fields ? { extractFields: extract.fields } : {}) } : params;
}

const free = affordCredits(async () => true);

const refused = (error: ApiError): FetchResult => ({ ok: false, error, vetoed: false, retryable: false, interrupted: false });

/** The pipeline's refusals before anything is fetched (the recipe's: REQS004, REQS007) as a failed fetch, which costs nothing. */
async function runFetch(pipeline: FetchPipeline, job: FetchJob, billing: FetchBilling): Promise<FetchResult> {
  try {
    return await pipeline.run(job, billing);
  } catch (error) {
    if (!isApiError(error)) throw error;
    return refused(error);
  }
}

async function isPrepared(deps: PageCheckDeps, url: URL): Promise<boolean> {
  return (await deps.recipes.recipeFor(registrableDomainOf(url.hostname) ?? url.hostname)) !== undefined;
}

export async function checkPage(deps: PageCheckDeps, request: PageRequest): Promise<PageOutcome> {
  let params: FetchParams;
  try {
    params = paramsOf(request.monitorId, request.url, request.outputs, request.respectRobots);
    if (params.extract && !(await isPrepared(deps, params.url))) params = paramsOf(request.monitorId, request.url, request.outputs, request.respectRobots, false);
  } catch (error) {
    if (!isApiError(error)) throw error;
    return { ok: false, code: error.code, detail: error.detail, retryable: false, interrupted: false };
  }
  const job = { params, signal: request.signal, reuseKey: request.accountId };
  const probe: FetchDone[] = [];
  if (request.baseline) {
    const first = await runFetch(deps.pipeline, { ...job, beforeSettle: async (done) => (probe.push(done), done.shaped) }, free);
    if (!first.ok) probe.length = 0;
  }
  let recorded: Recorded | undefined;
  const pending = request.pending ?? deps.recorder.begin({ accountId: request.accountId, url: params.url.href, tag: monitorTag(request.monitorId) });
  const mainContent = request.outputs.main_content === true;
  const result = await runFetch(
    deps.pipeline,
    {
      ...job,
      beforeSettle: async (done) => {
        recorded = await recordFetched(pending, params, done, deps.outputs, { origin: request.origin, probe, mainContent });
        return done.shaped;
      },
    },
    affordCredits((credits) => request.afford(credits)),
  );
  if (!result.ok) {
    const { error, retryable, interrupted } = result;
    return { ok: false, ...(result.page ? { status: result.page.status } : {}), code: error.code, detail: error.detail, retryable, interrupted };
  }
  if (!recorded) throw new Error('a tracked fetch records its page');
  const html = result.page.html ?? decodeHtml(result.page.body, result.page.contentType);
  return { ok: true, recorded, credits: result.cost, html, finalUrl: result.page.finalUrl };
}
