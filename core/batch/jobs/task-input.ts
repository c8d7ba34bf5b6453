/**
 * What a Batch submission must be before anything is stored: each task's URL, and the Fetch
 * parameters of the job and of each task, checked by the Fetch route's own schema and rules
 * (core/fetch/task.ts). A bad value is 400 `invalid_argument` naming the parameter; bad tasks are
 * listed in `invalid_tasks` (`index`, `reason`, `value`), as the clients read them, the reason being
 * one of their input codes.
 */
import type { PlanCatalogue } from '../../accounts/plans';
import type { Principal } from '../../accounts';
import { isApiError, problem } from '../../../base/errors';
import { extractNotInPlan } from '../../fetch/calls';
import { parameterOf, parseTaskParams } from '../../fetch/task';
import { batchTask, type BatchTask } from '../store';

export interface TaskInput {
  url: string;
  external_id?: string;
  metadata?: Record<string, string>;
  method?: string;
  body?: unknown;
  zenrows_params?: Record<string, unknown>;
}

interface InvalidTask {
  index: number;
  reason: string;
  value?: string;
}

const MAX_URL = 8_192;
/** Invalid tasks listed in one problem; the count says how many there were. */
const LISTED = 100;

/** Fetch parameters as the Fetch route receives them: strings (objects and arrays as JSON). */
export function paramStrings(params: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(params ?? {})) {
    if (value === null || value === undefined) continue;
    out[name] = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
  return out;
}

function urlProblem(raw: string): string | undefined {
  if (raw.length > MAX_URL) return 'url_too_long';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return /^[a-z][a-z0-9+.-]*:/i.test(raw) ? 'missing_host' : 'malformed_url';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'unsupported_scheme';
  if (!url.hostname) return 'missing_host';
  return undefined;
}

/** `extract` as on Fetch: only on plans that include Extract (402 AUTH010, nothing stored). */
export function checkExtractPlan(plans: Pick<PlanCatalogue, 'withExtract'>, principal: Principal, jobParams: Record<string, string>, tasks: readonly BatchTask[]): void {
  if (principal.plan.extract) return;
  if (jobParams.extract !== undefined || tasks.some((task) => task.params?.extract !== undefined)) throw extractNotInPlan(plans, principal);
}

/** Checks the job's parameters once, with a placeholder URL: a bad one names the parameter. */
export function checkJobParams(params: Record<string, string>): void {
  try {
    parseTaskParams('https://example.com/', params);
  } catch (error) {
    if (!isApiError(error)) throw error;
    const parameter = parameterOf(error) ?? 'zenrows_params';
    throw problem('invalid_argument', `zenrows_params.${parameter}: ${error.detail}`, { members: { parameter: `zenrows_params.${parameter}` } });
  }
}

/** The tasks as stored, or 400 invalid_argument listing every invalid one. */
export function checkTasks(tasks: TaskInput[], jobParams: Record<string, string>): BatchTask[] {
  const invalid: InvalidTask[] = [];
  const stored: BatchTask[] = [];
  tasks.forEach((task, index) => checkTask(task, index, jobParams, invalid, stored));
  return checked(invalid, stored);
}

/** Tasks checked between them on one event loop turn by `checkTasksYielding`. */
const CHECK_CHUNK = 2_000;

/**
 * `checkTasks` for large lists (up to 100,000 tasks in a job): the API's event loop is given back
 * between chunks, so other requests (`/healthz`, other accounts' Fetches) are answered meanwhile.
 */
export async function checkTasksYielding(tasks: TaskInput[], jobParams: Record<string, string>): Promise<BatchTask[]> {
  const invalid: InvalidTask[] = [];
  const stored: BatchTask[] = [];
  for (let first = 0; first < tasks.length; first += CHECK_CHUNK) {
    if (first > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    const end = Math.min(tasks.length, first + CHECK_CHUNK);
    for (let index = first; index < end; index++) checkTask(tasks[index] as TaskInput, index, jobParams, invalid, stored);
  }
  return checked(invalid, stored);
}

function checkTask(task: TaskInput, index: number, jobParams: Record<string, string>, invalid: InvalidTask[], stored: BatchTask[]): void {
  const urlIssue = urlProblem(task.url);
  if (urlIssue) {
    invalid.push({ index, reason: urlIssue, value: task.url.slice(0, 200) });
    return;
  }
  if (task.external_id !== undefined && !/^[A-Za-z0-9._-]{1,128}$/.test(task.external_id)) {
    invalid.push({ index, reason: 'invalid_external_id', value: task.external_id.slice(0, 200) });
    return;
  }
  if (task.method !== undefined && task.method !== 'GET') {
    invalid.push({ index, reason: 'unsupported_method', value: task.method });
    return;
  }
  if (task.body !== undefined && task.body !== null) {
    invalid.push({ index, reason: 'body_not_allowed' });
    return;
  }
  const own = paramStrings(task.zenrows_params);
  if (Object.keys(own).length > 0) {
    try {
      parseTaskParams(task.url, { ...jobParams, ...own });
    } catch (error) {
      if (!isApiError(error)) throw error;
      const parameter = parameterOf(error);
      invalid.push({ index, reason: /Unknown parameter/.test(error.detail) ? 'unknown_param' : 'invalid_param_value', value: parameter ?? error.detail });
      return;
    }
  }
  stored.push(batchTask({ url: task.url, externalId: task.external_id, metadata: task.metadata, params: own }));
}

/** The stored tasks, or the 400 listing the invalid ones. */
function checked(invalid: InvalidTask[], stored: BatchTask[]): BatchTask[] {
  if (invalid.length > 0) {
    const first = invalid[0] as InvalidTask;
    throw problem('invalid_argument', `${invalid.length} task(s) are invalid; the first, tasks[${first.index}], has ${first.reason}${first.value ? ` (${first.value})` : ''}.`, {
      members: { invalid_tasks: invalid.slice(0, LISTED), parameter: `tasks[${first.index}]` },
    });
  }
  return stored;
}
