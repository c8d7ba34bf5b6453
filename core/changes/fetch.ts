/**
 * Change tracking on Fetch (the HTTP route and the MCP tool):
 *
 * - `track_changes=true`: the pipeline runs as usual and, before the Fetch is billed, the page is
 *   recorded (record.ts) and the answer gains the outcome: a `change_tracking` member with
 *   `json_response`; the route sets the headers from `change` on plain answers. A page that cannot be
 *   recorded fails the request, and a failed request is not charged.
 * - `as_of`: nothing is fetched and nothing charged; the version current then (history.ts) is shaped
 *   by the Fetch's own shaping, as if the site had answered it now.
 */
import type { Accounts, Principal } from '../accounts';
import { problem } from '../../base/errors';
import { configurationOf, rungById, type HtmlOutputs, type Page, type Rung } from '../../engine';
import type { RecipeCache, RecipeDoc } from '../extract/recipes';
import { extractNotInPlan, fetchForAccount } from '../fetch/calls';
import { recipeForRequest, shapeExtract } from '../fetch/extract';
import type { FetchParams } from '../fetch/params';
import type { FetchDone, FetchJob, FetchPipeline, FetchResult } from '../fetch/pipeline';
import type { TaskChanges } from '../fetch/task';
import { answerStatus, htmlSourceOf, shapeResponse, targetStatusError, type Shaped } from '../fetch/respond';
import { pageOf, type Observation } from './content';
import { historyLimits, type ChangeHistory } from './history';
import type { TrackKey } from './keys';
import type { ChangeRecorder, FieldSource, PendingRecord, Recorded, VersionMark } from './record';

export type HistoryFetchResult = FetchResult & {
  /** `track_changes`: what the page was against the previous version. */
  change?: Recorded;
  /** `as_of`: the stored version that answered. */
  replayed?: VersionMark;
};

export interface FetchHistoryDeps {
  recorder: ChangeRecorder;
  history: ChangeHistory;
  /** Extract's recipes, for `as_of` with `extract`. */
  recipes?: RecipeCache;
  accounts: Pick<Accounts, 'plans' | 'charging'>;
  /** The HTML outputs: `as_of` shapes a stored page as a Fetch would, and field sources read pages with them. */
  outputs: HtmlOutputs;
}

/** A Fetch of an account, with its history: recorded (`track_changes`), answered from it (`as_of`), or neither. */
export async function fetchWithHistory(deps: FetchHistoryDeps, pipeline: FetchPipeline, principal: Principal, job: FetchJob): Promise<HistoryFetchResult> {
  const { params } = job;
  if (params.asOf) return replay(deps, principal, job.params);
  if (!params.trackChanges) return fetchForAccount(pipeline, deps.accounts, principal, job);
  let change: Recorded | undefined;
  // The URL's track is read while the site is asked: recording then costs the caller no look-up.
  const pending = deps.recorder.begin(trackKeyOf(principal.accountId, params));
  const result = await fetchForAccount(pipeline, deps.accounts, principal, {
    ...job,
    beforeSettle: async (done) => {
      change = await recordFetched(pending, params, done, deps.outputs);
      return params.jsonResponse ? withMember(done.shaped, 'change_tracking', changeTrackingJson(change)) : done.shaped;
    },
  });
  return result.ok && change ? { ...result, change } : result;
}

const trackKeyOf = (accountId: string, params: FetchParams): TrackKey => ({
  accountId,
  url: params.url.href,
  ...(params.changeTrackingTag !== undefined ? { tag: params.changeTrackingTag } : {}),
});

export interface RecordFetchedOptions {
  /** Names retried work: its second attempt answers what the first stored. */
  origin?: string;
  /** The same page fetched moments apart, so a URL tracked for the first time learns its noise. */
  probe?: readonly FetchDone[];
  /** Compare the page's main content rather than the whole page (a monitor's `main_content`). */
  mainContent?: boolean;
}

/** Records a fetched page for its caller (Fetch, MCP, Batch tasks, monitors). */
export async function recordFetched(pending: PendingRecord, params: FetchParams, done: FetchDone, outputs: HtmlOutputs, options: RecordFetchedOptions = {}): Promise<Recorded> {
  const fields = await fieldSource(params, done, outputs);
  const { origin, probe, mainContent = false } = options;
  return pending.record(observationOf(done, params, mainContent), {
    ...(fields ? { fields } : {}),
    ...(origin !== undefined ? { origin } : {}),
    ...(probe && probe.length > 0 ? { probe: probe.map((other) => observationOf(other, params, mainContent)) } : {}),
  });
}

/** Change tracking for Batch tasks (core/fetch/task.ts): each task's page recorded under its run's name for it. */
export function taskChanges(recorder: ChangeRecorder, outputs: HtmlOutputs): TaskChanges {
  return {
    async record(accountId, params, done, origin) {
      const change = await recordFetched(recorder.begin(trackKeyOf(accountId, params)), params, done, outputs, origin !== undefined ? { origin } : {});
      return { status: change.status, shaped: params.jsonResponse ? withMember(done.shaped, 'change_tracking', changeTrackingJson(change)) : done.shaped };
    },
  };
}

function observationOf(done: FetchDone, params: FetchParams, mainContent: boolean): Observation {
  const { page, rung, shaped } = done;
  // The answer is the whole page's Markdown already: it is not converted twice.
  const markdown = shaped.contentType.startsWith('text/markdown') && !params.mainContent && typeof shaped.body === 'string' ? shaped.body : undefined;
  return {
    body: page.body,
    ...(page.contentType ? { contentType: page.contentType } : {}),
    ...(page.html !== undefined ? { html: page.html, rendered: true } : {}),
    finalUrl: page.finalUrl,
    status: page.status,
    headers: page.headers,
    configuration: rung.id,
    ...(markdown !== undefined ? { markdown } : {}),
    ...(mainContent ? { mainContent: true } : {}),
    fetchedAt: new Date(),
  };
}

const bodyJson = (shaped: Shaped): unknown => JSON.parse(typeof shaped.body === 'string' ? shaped.body : shaped.body.toString('utf8'));

/** The structured output compared field by field: Extract's `parsed`, else css_extractor's, else autoparse's (pages read by the HTML outputs). */
async function fieldSource(params: FetchParams, done: FetchDone, outputs: HtmlOutputs): Promise<FieldSource | undefined> {
  const recipe: RecipeDoc | undefined = done.recipe;
  if (params.extract && recipe) {
    const parsed = (shaped: Shaped): unknown => (bodyJson(shaped) as { parsed?: unknown }).parsed ?? null;
    return { current: parsed(done.shaped), previous: async (page) => parsed(await shapeExtract(page, params, recipe, answerStatus(page, params), page.html !== undefined, outputs)) };
  }
  const spec = params.cssExtractor;
  if (spec !== undefined) {
    const extract = async (page: Page): Promise<unknown> => {
      const result = await outputs.run('cssExtractor', htmlSourceOf(page), { url: page.finalUrl, spec });
      return result.ok ? result.data : null;
    };
    return { current: params.jsonResponse ? await extract(done.page) : bodyJson(done.shaped), previous: extract };
  }
  if (params.autoparse) {
    const parse = (page: Page): Promise<unknown> => outputs.run('autoparse', htmlSourceOf(page), { url: page.finalUrl });
    return { current: params.jsonResponse ? await parse(done.page) : bodyJson(done.shaped), previous: parse };
  }
  return undefined;
}

/** `change_tracking` as the answer spells it. */
export function changeTrackingJson(change: Recorded): Record<string, unknown> {
  return {
    status: change.status,
    previous_fetched_at: change.previous ? change.previous.fetchedAt.toISOString() : null,
    version_id: change.version.id,
    diff: change.diff
      ? {
          text: change.diff.text,
          fields: change.diff.fields,
          ignored: change.diff.ignored,
          added: change.diff.added,
          removed: change.diff.removed,
          ...(change.diff.approximate ? { approximate: true } : {}),
          ...(change.diff.truncated ? { truncated: true } : {}),
        }
      : null,
  };
}

/** A JSON object answer with one more member, first (spliced in: the envelope holds the whole page, not parsed again). */
function withMember(shaped: Shaped, name: string, value: unknown): Shaped {
  const body = typeof shaped.body === 'string' ? shaped.body : shaped.body.toString('utf8');
  if (!shaped.contentType.startsWith('application/json') || !body.startsWith('{')) return shaped;
  const member = `${JSON.stringify(name)}:${JSON.stringify(value)}`;
  return { ...shaped, body: body === '{}' ? `{${member}}` : `{${member},${body.slice(1)}` };
}

export function versionNotFound(detail: string) {
  return problem('version_not_found', detail);
}

/** `as_of`: the stored version current then, shaped as a Fetch would shape the page; 0 credits, nothing fetched. */
async function replay(deps: FetchHistoryDeps, principal: Principal, params: FetchParams): Promise<HistoryFetchResult> {
  const asOf = params.asOf;
  if (!asOf) throw new Error('replay needs as_of');
  if (params.extract && !principal.plan.extract) throw extractNotInPlan(deps.accounts.plans, principal);
  let recipe: RecipeDoc | undefined;
  if (params.extract) {
    if (!deps.recipes) throw problem('REQS004', 'extract is not available here.', { members: { parameter: 'extract' } });
    recipe = await recipeForRequest(deps.recipes, params);
  }
  const key = trackKeyOf(principal.accountId, params);
  const limits = historyLimits(principal);
  const found = await deps.history.at(key, limits, asOf);
  if (!found) {
    const oldest = asOf.kind === 'time' ? await deps.history.oldest(key, limits) : undefined;
    throw versionNotFound(
      asOf.kind === 'version'
        ? `This account keeps no version ${asOf.id} of this URL${params.changeTrackingTag !== undefined ? ' under this tag' : ''}.`
        : oldest
          ? `This account keeps no version of this URL from ${asOf.at.toISOString()}: the oldest kept is from ${oldest.toISOString()}.`
          : 'This account keeps no version of this URL: fetch it with track_changes=true first.',
    );
  }
  const { doc } = found.entry;
  const body = await deps.history.body(doc);
  if (!body) throw versionNotFound(`The page of version ${found.entry.id} is no longer kept.`);
  const page = pageOf(doc.content, body);
  const rung = (doc.content.configuration ? rungById(doc.content.configuration) : undefined) ?? (rungById(configurationOf({ jsRender: false, premiumProxy: false }).id) as Rung);
  const statusError = targetStatusError(page, params);
  if (statusError) return { ok: false, error: statusError, vetoed: false, retryable: false, interrupted: false, page, rung };
  let shaped: Shaped;
  let extractWarning: string | undefined;
  if (recipe) {
    const extracted = await shapeExtract(page, params, recipe, answerStatus(page, params), page.html !== undefined, deps.outputs);
    extractWarning = extracted.warning;
    shaped = { status: extracted.status, contentType: extracted.contentType, body: extracted.body };
  } else {
    shaped = await shapeResponse(page, params, deps.outputs);
  }
  const replayed = { id: found.entry.id, fetchedAt: doc.fetched_at };
  if (params.jsonResponse) shaped = withMember(shaped, 'as_of', { version_id: replayed.id, fetched_at: replayed.fetchedAt.toISOString() });
  return { ok: true, shaped, cost: 0, page, rung, replayed, ...(extractWarning ? { extractWarning } : {}) };
}
