/**
 * One Batch task as one Fetch request: the task's parameters go through the Fetch schema and rules (so a
 * task accepts exactly what `GET /v1/` accepts, `extract` included), the page through the Fetch
 * pipeline (mode=auto and Extract's recipes included) and the same shaping. Billing is the caller's: `afford` is asked before each configuration
 * is tried, and the outcome says the credits of the one that returned the page.
 */
import type { TaskResultType, TaskRunner } from '../batch/task-runner';
import { isApiError, problem, type ApiError } from '../../base/errors';
import { checkQuery } from '../../base/validation';
import { affordCredits } from './billing';
import { FETCH_QUERY, fetchIssues, parseFetchParams, type FetchParams } from './params';
import type { FetchDone, FetchPipeline } from './pipeline';
import type { Shaped } from './respond';

/** Change tracking as Batch tasks use it (core/changes builds it): records a page, answers its status and the answer to store. */
export interface TaskChanges {
  record(accountId: string, params: FetchParams, done: FetchDone, origin?: string): Promise<{ status: 'new' | 'same' | 'changed'; shaped: Shaped }>;
}

/** Parameters Batch does not take: the key is the job's, and a task fetches (no `as_of`). */
const NOT_FOR_TASKS = new Set(['apikey', 'url', 'custom_headers', 'as_of']);

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
  // A PDF target's own bytes (a document fetched without a response_type).
  if (/^application\/pdf/i.test(contentType)) return 'pdf';
  return 'html';
}

const failed = (error: ApiError) => ({ code: error.code, status: error.status, detail: error.detail });

export function createTaskRunner(pipeline: FetchPipeline, changes?: TaskChanges): TaskRunner {
  return async (task) => {
    let params: FetchParams;
    try {
      params = parseTaskParams(task.url, task.params);
    } catch (error) {
      if (!isApiError(error)) throw error;
      return { ok: false, vetoed: false, retryable: false, interrupted: false, error: failed(error) };
    }
    // track_changes: the page is recorded before the task's outcome is (core/changes).
    let change: 'new' | 'same' | 'changed' | undefined;
    const track = params.trackChanges && changes && task.accountId !== undefined ? { changes, accountId: task.accountId } : undefined;
    const beforeSettle = track
      ? async (done: FetchDone) => {
          const recorded = await track.changes.record(track.accountId, params, done, task.origin);
          change = recorded.status;
          return recorded.shaped;
        }
      : undefined;
    let result;
    try {
      result = await pipeline.run({ params, signal: task.signal, reuseKey: task.reuseKey, ...(beforeSettle ? { beforeSettle } : {}), ...(task.park ? { park: task.park } : {}) }, affordCredits((credits) => task.afford(credits)));
    } catch (error) {
      // Refused before anything was fetched (`extract` on a domain not prepared, a field its recipe lacks): the task fails, uncharged.
      if (!isApiError(error)) throw error;
      return { ok: false, vetoed: false, retryable: false, interrupted: false, error: failed(error) };
    }
    if (!result.ok) {
      const { vetoed, retryable, interrupted } = result;
      return { ok: false, vetoed, retryable, interrupted, error: vetoed ? { code: 'payment_required', status: 402, detail: result.error.detail } : failed(result.error) };
    }
    const { shaped } = result;
    const body = typeof shaped.body === 'string' ? Buffer.from(shaped.body, 'utf8') : shaped.body;
    return { ok: true, contentType: shaped.contentType, body, type: typeOf(params, shaped.contentType), credits: result.cost, ...(change ? { change } : {}) };
  };
}
