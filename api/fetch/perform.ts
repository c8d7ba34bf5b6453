/**
 * One Fetch, from validated parameters to the shaped answer, shared by the HTTP route and the MCP
 * tools so both are billed and answer alike:
 *
 *   plan check (extract: AUTH010) ─> recipe check (REQS007/REQS004) ─> reserve credits (AUTH004/AUTH014)
 *     ─> retrieve (fixed configuration, or mode=auto growing the reservation per rung)
 *     ─> target status (RESP002 / RESP001 unless passed through) ─> shape ─> settle
 *
 * The caller holds the concurrency slot around it. Failures release the reservation: a failed request
 * is never charged.
 */
import { refusalError, type Hold } from '../../core/accounts/charging';
import type { Principal } from '../../core/accounts';
import type { Refusal } from '../../core/accounts/ledger';
import { problem, type ApiError } from '../../core/errors';
import { costOf } from '../../core/pricing';
import { AUTO_CONFIGURATION_HEADER, describeRung } from '../../engine';
import type { RetrievalError, RetrievalMode } from '../../engine';
import type { ApiDeps } from '../deps';
import { echoTargetHeaders } from './headers';
import { createRecipeCache, EXTRACT_WARNING_HEADER, recipeForRequest, shapeExtract, type RecipeCache } from './extract';
import { createExtractCommands } from '../../core/extract/commands';
import type { FetchParams } from './params';
import { answerStatus, shapeResponse, targetStatusError, type Shaped } from './respond';

/** Where the response headers of a Fetch go: the HTTP response, or nowhere for an MCP tool. */
export interface HeaderSink {
  set(name: string, value: string): void;
  append(name: string, value: string): void;
}

export interface FetchRequest {
  params: FetchParams;
  method: 'GET' | 'POST' | 'PUT';
  /** Headers forwarded to the target (see headers.ts). */
  headers: Array<[string, string]>;
  body?: Buffer;
  /** Aborted when the caller goes away. */
  signal: AbortSignal;
}

export interface FetchOutcome {
  shaped: Shaped;
  /** Credits charged. */
  cost: number;
}

const retrievalProblem = (error: RetrievalError): ApiError =>
  problem(error.code, error.detail, error.parameter ? { members: { parameter: error.parameter } } : {});

function modeOf(params: FetchParams): RetrievalMode {
  return params.auto
    ? { kind: 'auto', needsBrowser: params.needsBrowser }
    : { kind: 'fixed', jsRender: params.jsRender, premiumProxy: params.premiumProxy };
}

/** Credits reserved up front: the configuration's price, or under mode=auto the first rung's. */
const firstCost = (params: FetchParams): number =>
  params.auto ? costOf({ jsRender: params.needsBrowser, premiumProxy: false }) : costOf(params);

/** AUTH010, before anything is fetched or charged: clients of `extract` fall back to `autoparse` on it. */
function extractNotInPlan(deps: Pick<ApiDeps, 'accounts'>, principal: Principal): ApiError {
  const including = deps.accounts.plans.withExtract();
  return problem(
    'AUTH010',
    `Extract is not included in the ${principal.plan.name} plan${including.length > 0 ? `; it is included in: ${including.join(', ')}` : ''}. Without extract, autoparse=true returns general-purpose parsed JSON.`,
    { members: { parameter: 'extract' } },
  );
}

/** The recipes every Fetch caller reads, asking for a re-preparation when a page shows one is stale. */
export function createFetchRecipes(deps: Pick<ApiDeps, 'db' | 'temporal' | 'config'>): RecipeCache {
  const commands = createExtractCommands({ db: deps.db, temporal: deps.temporal, taskQueue: deps.config.temporalTaskQueue });
  return createRecipeCache(deps.db.db, { onStale: (domain) => commands.requestRefresh(domain) });
}

export async function performFetch(
  deps: Pick<ApiDeps, 'accounts' | 'fetching'>,
  recipes: RecipeCache,
  principal: Principal,
  request: FetchRequest,
  out: HeaderSink,
): Promise<FetchOutcome> {
  const { params } = request;
  if (params.extract && !principal.plan.extract) throw extractNotInPlan(deps, principal);
  const recipe = params.extract ? await recipeForRequest(recipes, params) : undefined;
  const hold: Hold = await deps.accounts.charging.reservePooled(principal, firstCost(params), 'fetch');
  let refused: Refusal | undefined;
  try {
    const result = await deps.fetching.retrieval.retrieve({
      url: params.url.href,
      method: request.method,
      headers: request.headers,
      body: request.body,
      proxyCountry: params.proxyCountry,
      sessionId: params.sessionId,
      browser: params.browser,
      mode: modeOf(params),
      respectRobots: params.respectRobots,
      signal: request.signal,
      reuseKey: principal.accountId,
      // Escalating to a dearer configuration first grows the reservation; no credits, no escalation.
      beforeRung: async (rung) => {
        if (rung.cost <= hold.credits) return true;
        const grown = await hold.tryGrow(rung.cost);
        if (!grown.ok) refused = grown.refused;
        return grown.ok;
      },
    });
    if (!result.ok) {
      throw refused && result.error.kind === 'vetoed' ? refusalError(refused, 'fetch', principal) : retrievalProblem(result.error);
    }
    const { page, rung } = result;
    out.set(AUTO_CONFIGURATION_HEADER, describeRung(rung));
    out.set('Zr-Final-Url', page.finalUrl);
    echoTargetHeaders(out, page.headers);
    const statusError = targetStatusError(page, params);
    if (statusError) throw statusError;
    let shaped: Shaped;
    if (recipe) {
      const extracted = shapeExtract(page, params, recipe, answerStatus(page, params), rung.engine === 'rendered');
      if (extracted.warning) out.set(EXTRACT_WARNING_HEADER, extracted.warning);
      if (extracted.stale) await recipes.reportStale(recipe.domain);
      shaped = { status: extracted.status, contentType: extracted.contentType, body: extracted.body };
    } else {
      shaped = shapeResponse(page, params);
    }
    await hold.settle(rung.cost);
    return { shaped, cost: rung.cost };
  } finally {
    await hold.release();
  }
}
