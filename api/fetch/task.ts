/**
 * One Batch task as one Fetch request: the task's parameters go through the Fetch route's schema and
 * rules (so a task accepts exactly what `GET /v1/` accepts), the page through the same retrieval
 * (mode=auto included) and the same shaping. Billing is the caller's: `afford` is asked before each
 * configuration is tried, and the outcome says the credits of the one that returned the page.
 *
 * The worker receives `createTaskRunner` from its composition root (workers/main.ts), so activities
 * run Fetch's own code without importing the HTTP layer.
 */
import { ERROR_CATALOGUE, isApiError, problem, type ApiError } from '../../core/errors';
import { failureOf, type RetrievalMode, type Retrieval } from '../../engine';
import type { TaskResultType, TaskRunner } from '../../core/batch/task-runner';
import { checkQuery } from '../http/routes';
import { FETCH_QUERY, fetchIssues, parseFetchParams, type FetchParams } from './params';
import { shapeResponse, targetStatusError } from './respond';

/** Parameters Batch does not take: the key is the job's, and Extract needs a per-request recipe. */
const NOT_FOR_TASKS = new Set(['apikey', 'url', 'extract', 'extract_fields', 'custom_headers']);

/** A task's parameters as Fetch parameters, or the Fetch problem naming the bad one (REQS004). */
export function parseTaskParams(url: string, params: Record<string, string>): FetchParams {
  for (const name of Object.keys(params)) {
    if (NOT_FOR_TASKS.has(name)) throw problem('REQS004', `Parameter "${name}" is not accepted in a Batch task.`, { members: { parameter: name } });
  }
  const raw = { ...params, url };
  const checked = checkQuery(FETCH_QUERY, raw, fetchIssues);
  return parseFetchParams(checked);
}

/** The parameter a Fetch problem names, when it names one. */
export function parameterOf(error: ApiError): string | undefined {
  const parameter = error.members?.parameter;
  return typeof parameter === 'string' ? parameter : undefined;
}

function typeOf(params: FetchParams, contentType: string): TaskResultType {
  if (params.responseType) return params.responseType;
  if (/json/i.test(contentType)) return 'json';
  return 'html';
}

const modeOf = (params: FetchParams): RetrievalMode =>
  params.auto ? { kind: 'auto', needsBrowser: params.needsBrowser } : { kind: 'fixed', jsRender: params.jsRender, premiumProxy: params.premiumProxy };

/** Target answers worth trying again later: rate limits and server-side failures. */
const transientStatus = (status: number): boolean => status === 429 || status >= 500;

export function createTaskRunner(fetching: { retrieval: Retrieval }): TaskRunner {
  return async (task) => {
    let params: FetchParams;
    try {
      params = parseTaskParams(task.url, task.params);
    } catch (error) {
      if (!isApiError(error)) throw error;
      return { ok: false, vetoed: false, retryable: false, interrupted: false, error: { code: error.code, status: error.status, detail: error.detail } };
    }
    let vetoed = false;
    const result = await fetching.retrieval.retrieve({
      url: params.url.href,
      method: 'GET',
      headers: [],
      proxyCountry: params.proxyCountry,
      sessionId: params.sessionId,
      browser: params.browser,
      mode: modeOf(params),
      respectRobots: params.respectRobots,
      signal: task.signal,
      reuseKey: task.reuseKey,
      beforeRung: async (rung) => {
        const affordable = await task.afford(rung.cost);
        vetoed ||= !affordable;
        return affordable;
      },
    });
    if (!result.ok) {
      const { kind, code, detail } = result.error;
      const refused = vetoed && kind === 'vetoed';
      return {
        ok: false,
        vetoed: refused,
        // A time-out, a connection or a block may not happen again; a refused target or a bad parameter will.
        retryable: !refused && failureOf(kind).retry,
        interrupted: !refused && !failureOf(kind).final,
        error: { code: refused ? 'payment_required' : code, status: refused ? 402 : ERROR_CATALOGUE[code].status, detail },
      };
    }
    const { page, rung } = result;
    const statusError = targetStatusError(page, params);
    if (statusError) {
      return { ok: false, vetoed: false, retryable: transientStatus(page.status), interrupted: false, error: { code: statusError.code, status: statusError.status, detail: statusError.detail } };
    }
    const shaped = shapeResponse(page, params);
    const body = typeof shaped.body === 'string' ? Buffer.from(shaped.body, 'utf8') : shaped.body;
    return { ok: true, contentType: shaped.contentType, body, type: typeOf(params, shaped.contentType), credits: rung.cost };
  };
}
