/**
 * Fetch, `GET|POST|PUT /v1/`: the synchronous retrieval of one page.
 *
 *   validate (REQS004, RESP004) ─> slot (AUTH008) ─> fetchForAccount (core/fetch: plan, recipe,
 *     credits, engine, shape, settle) ─> respond
 *
 * The MCP tools (api/mcp/tools.ts), Batch tasks and crawls run the same pipeline (core/fetch/pipeline.ts).
 */
import { setCostHeaders, withSlot } from '../accounts/concurrency';
import { authenticate, principalOf, securityOf } from '../auth/authenticate';
import type { ApiDeps } from '../deps';
import type { HttpContext } from '../http/context';
import type { LeanRoute, Method, RouteInput } from '../http/routes';
import { markThirdParty, THIRD_PARTY_HEADERS } from '../http/third-party';
import { fetchWithHistory } from '../../core/changes';
import { FETCH_QUERY, fetchIssues, parseFetchParams } from '../../core/fetch/params';
import type { FetchPipeline } from '../../core/fetch/pipeline';
import { forwardedHeaders } from './headers';
import { DOCUMENT_PRICE_RULE } from '../../core/documents/price';
import { setChangeHeaders, setFetchHeaders } from './pipeline';

/** Change tracking's headers (our extension), in the OpenAPI document. */
const CHANGE_HEADERS = {
  'X-Change-Status': { description: 'With track_changes (our extension): `new`, `same` or `changed`, against the URL’s previous version.', schema: { type: 'string', enum: ['new', 'same', 'changed'] } },
  'X-Previous-Fetched-At': { description: 'With track_changes: when the version compared with was fetched (RFC 3339); absent for `new`.', schema: { type: 'string', format: 'date-time' } },
  'X-Change-Version-Id': { description: 'With track_changes: the version that holds the page now (for as_of); with as_of: the version that answered.', schema: { type: 'string' } },
  'X-Version-Fetched-At': { description: 'With as_of: when the version that answered was fetched.', schema: { type: 'string', format: 'date-time' } },
};

async function handleFetch(deps: ApiDeps, pipeline: FetchPipeline, ctx: HttpContext, input: RouteInput): Promise<void> {
  const params = parseFetchParams(input.query);
  const principal = principalOf(ctx);
  const method = ctx.method as 'GET' | 'POST' | 'PUT';
  const body = method === 'GET' || !input.rawBody || input.rawBody.length === 0 ? undefined : input.rawBody;
  const headers = forwardedHeaders(ctx, params.customHeaders, body !== undefined);
  // Whatever shape it takes, the answer is the target's content.
  markThirdParty(ctx);
  await withSlot(ctx, deps.accounts, principal, async (signal) => {
    // Change tracking (core/changes): track_changes records the page, as_of answers from the history.
    const result = await fetchWithHistory(deps.services.changes, pipeline, principal, { params, method, headers, body, signal });
    setFetchHeaders(ctx, result);
    setChangeHeaders(ctx, result);
    if (!result.ok) throw result.error;
    const { shaped, cost } = result;
    setCostHeaders(ctx, cost);
    ctx.status = shaped.status;
    ctx.body = shaped.body;
    ctx.set('Content-Type', shaped.contentType);
  });
}

export function fetchRoutes(deps: ApiDeps): LeanRoute[] {
  const { pipeline } = deps.services;
  const route = (method: Method): LeanRoute => ({
    lean: true,
    method,
    path: '/v1/',
    operationId: `fetch${method[0]}${method.slice(1).toLowerCase()}`,
    summary: 'Retrieve one page as HTML, Markdown, plain text, PDF, a screenshot or JSON.',
    description:
      'POST and PUT bodies are forwarded to the target as they came, with the caller’s Content-Type. ' +
      'Credits: plain 1, js_render 5, premium_proxy 10, both 25; mode=auto is billed for the configuration that succeeded. ' +
      `A target that is a document (PDF, DOCX, PPTX, XLSX, ODT/ODS/ODP, CSV) comes back as its own bytes, or converted with response_type=markdown|plaintext or json_response (our extension): ${DOCUMENT_PRICE_RULE}`,
    tags: ['Fetch'],
    security: securityOf('fetch'),
    query: FETCH_QUERY,
    ...(method === 'GET' ? {} : { body: 'raw' as const }),
    issues: fetchIssues,
    before: [authenticate(deps, 'fetch')],
    responses: {
      200: {
        description: 'The page in the shape asked for.',
        headers: {
          ...Object.fromEntries(Object.entries(THIRD_PARTY_HEADERS).map(([name, value]) => [name, { description: `Always \`${value}\`: the body is the target’s content.`, schema: { type: 'string' } }])),
          ...CHANGE_HEADERS,
        },
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
      404: { description: 'RESP002: the target answered 404; or, with as_of (our extension), version_not_found: the account keeps no version of the URL then (or by that id).' },
    },
    handler: (ctx, input) => handleFetch(deps, pipeline, ctx, input),
  });
  return [route('GET'), route('POST'), route('PUT')];
}
