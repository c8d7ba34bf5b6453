/**
 * Fetch, `GET|POST|PUT /v1/`: the synchronous retrieval of one page.
 *
 *   validate (REQS004, RESP004) ─> slot (AUTH008) ─> reserve credits (AUTH004/AUTH014)
 *     ─> retrieve (fixed configuration, or mode=auto growing the reservation per rung)
 *     ─> target status (RESP002 / RESP001 unless passed through) ─> shape ─> settle, respond
 *
 * Failures release the reservation: a failed request is never charged.
 */
import { refusalError, type Hold } from '../../core/accounts/charging';
import { costOf } from '../../core/pricing';
import type { Refusal } from '../../core/accounts/ledger';
import { problem, type ApiError } from '../../core/errors';
import { AUTO_CONFIGURATION_HEADER, describeRung } from '../../engine/escalation';
import type { RetrievalError, RetrievalMode } from '../../engine/retrieve';
import { setCostHeaders, withSlot } from '../accounts/concurrency';
import { authenticate, principalOf, securityOf } from '../auth/authenticate';
import type { ApiDeps } from '../deps';
import type { HttpContext } from '../http/context';
import type { LeanRoute, Method, RouteInput } from '../http/routes';
import { echoTargetHeaders, forwardedHeaders } from './headers';
import { FETCH_QUERY, fetchIssues, parseFetchParams, type FetchParams } from './params';
import { createRecipeCache, EXTRACT_WARNING_HEADER, recipeForRequest, shapeExtract, type RecipeCache } from './extract';
import { answerStatus, shapeResponse, targetStatusError } from './respond';
import { decodeHtml } from '../../engine/outputs';

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

async function handleFetch(deps: ApiDeps, recipes: RecipeCache, ctx: HttpContext, input: RouteInput): Promise<void> {
  const params = parseFetchParams(input.query, ctx.query);
  // Refused before a slot or a credit is taken: an unprepared domain costs nothing.
  const recipe = params.extract ? await recipeForRequest(recipes, params) : undefined;
  const principal = principalOf(ctx);
  const method = ctx.method as Method;
  const body = method === 'GET' || !input.rawBody || input.rawBody.length === 0 ? undefined : input.rawBody;
  const headers = forwardedHeaders(ctx, params.customHeaders, body !== undefined);

  await withSlot(ctx, deps.accounts, principal, async (signal) => {
    const hold: Hold = await deps.accounts.charging.reservePooled(principal, firstCost(params), 'fetch');
    let refused: Refusal | undefined;
    try {
      const result = await deps.fetching.retrieval.retrieve({
        url: params.url.href,
        method: method as 'GET' | 'POST' | 'PUT',
        headers,
        body,
        proxyCountry: params.proxyCountry,
        sessionId: params.sessionId,
        browser: params.browser,
        mode: modeOf(params),
        signal,
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
      ctx.set(AUTO_CONFIGURATION_HEADER, describeRung(rung));
      ctx.set('Zr-Final-Url', page.finalUrl);
      echoTargetHeaders(ctx, page.headers);
      const statusError = targetStatusError(page, params);
      if (statusError) throw statusError;
      let shaped;
      if (recipe) {
        const extracted = shapeExtract(page, page.html ?? decodeHtml(page.body, page.contentType), params, recipe, answerStatus(page, params), rung.engine === 'rendered');
        if (extracted.warning) ctx.set(EXTRACT_WARNING_HEADER, extracted.warning);
        shaped = extracted;
      } else {
        shaped = shapeResponse(page, params);
      }
      await hold.settle(rung.cost);
      setCostHeaders(ctx, rung.cost);
      ctx.status = shaped.status;
      ctx.body = shaped.body;
      ctx.set('Content-Type', shaped.contentType);
    } finally {
      await hold.release();
    }
  });
}

export function fetchRoutes(deps: ApiDeps): LeanRoute[] {
  const recipes = createRecipeCache(deps.db.db);
  const route = (method: Method): LeanRoute => ({
    lean: true,
    method,
    path: '/v1/',
    operationId: `fetch${method[0]}${method.slice(1).toLowerCase()}`,
    summary: 'Retrieve one page as HTML, Markdown, plain text, PDF, a screenshot or JSON.',
    description:
      'POST and PUT bodies are forwarded to the target as they came, with the caller’s Content-Type. ' +
      'Credits: plain 1, js_render 5, premium_proxy 10, both 25; mode=auto is billed for the configuration that succeeded.',
    tags: ['Fetch'],
    security: securityOf('fetch'),
    query: FETCH_QUERY,
    ...(method === 'GET' ? {} : { body: 'raw' as const }),
    issues: fetchIssues,
    before: [authenticate(deps, 'fetch')],
    responses: {
      200: {
        description: 'The page in the shape asked for.',
        content: {
          'text/html': {},
          'text/markdown': {},
          'text/plain': {},
          'application/json': {},
          'application/pdf': {},
          'image/png': {},
          'image/jpeg': {},
        },
      },
    },
    handler: (ctx, input) => handleFetch(deps, recipes, ctx, input),
  });
  return [route('GET'), route('POST'), route('PUT')];
}
