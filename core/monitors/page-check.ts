/**
 * One page of a check: fetched like a Batch task (the Fetch schema, pipeline and shaping; billing is
 * the caller's `afford`), recorded under the monitor's tag of change tracking with its diff, which
 * the check keeps for its event. At the baseline the page is fetched once more a moment earlier and
 * not billed: the two fetches teach the URL's noise at once (core/changes `probe`), so the next check
 * does not report a generation time or a token as a change.
 */
import { isApiError } from '../../base/errors';
import { decodeHtml, type HtmlOutputs } from '../../engine';
import { recordFetched, type ChangeRecorder, type PendingRecord, type Recorded } from '../changes';
import { affordCredits } from '../fetch/billing';
import type { FetchDone, FetchPipeline } from '../fetch/pipeline';
import { parseTaskParams } from '../fetch/task';
import type { FetchParams } from '../fetch/params';
import { monitorTag, type MonitorOutputs } from './store';

export interface PageCheckDeps {
  pipeline: FetchPipeline;
  recorder: ChangeRecorder;
  /** The HTML outputs: the field outputs a page is compared on are read with them. */
  outputs: HtmlOutputs;
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

export function paramsOf(monitorId: string, url: string, outputs: MonitorOutputs, respectRobots = false): FetchParams {
  return parseTaskParams(url, {
    track_changes: 'true',
    ...(respectRobots ? { respect_robots: 'true' } : {}),
    change_tracking_tag: monitorTag(monitorId),
    ...(outputs.css_extractor ? { css_extractor: JSON.stringify(outputs.css_extractor) } : {}),
    ...(outputs.main_content ? { main_content: 'true' } : {}),
  });
}

const free = affordCredits(async () => true);

export async function checkPage(deps: PageCheckDeps, request: PageRequest): Promise<PageOutcome> {
  let params: FetchParams;
  try {
    params = paramsOf(request.monitorId, request.url, request.outputs, request.respectRobots);
  } catch (error) {
    if (!isApiError(error)) throw error;
    return { ok: false, code: error.code, detail: error.detail, retryable: false, interrupted: false };
  }
  const job = { params, signal: request.signal, reuseKey: request.accountId };
  const probe: FetchDone[] = [];
  if (request.baseline) {
    const first = await deps.pipeline.run({ ...job, beforeSettle: async (done) => (probe.push(done), done.shaped) }, free);
    if (!first.ok) probe.length = 0;
  }
  let recorded: Recorded | undefined;
  const pending = request.pending ?? deps.recorder.begin({ accountId: request.accountId, url: params.url.href, tag: monitorTag(request.monitorId) });
  const result = await deps.pipeline.run(
    {
      ...job,
      beforeSettle: async (done) => {
        recorded = await recordFetched(pending, params, done, deps.outputs, request.origin, probe);
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
