/**
 * From a retrieved page to the Fetch response: whether the target's status is a success, an error, or
 * passed through (`original_status`, `allowed_status_codes`), and which shape the body takes.
 *
 * Body precedence: json_response envelope > css_extractor > autoparse > outputs > screenshot >
 * response_type (markdown, plaintext, pdf) > the target's content as received. `main_content` narrows
 * the Markdown, plain text and HTML page to its article, and adds the article to the JSON envelope.
 *
 * Every HTML output goes through the engine's HtmlOutputs: inline for a small page, on a worker thread
 * for a big or deep one, refused (HtmlRefused, answered by `htmlProblem`) past a parse cap or a budget.
 */
import { problem, type ApiError } from '../../base/errors';
import { decodeHtml, isHtml, type HtmlOutputs, type HtmlRefused, type HtmlSource, type MainContentFormat, type OutputKind, type Page } from '../../engine';
import type { FetchParams } from './params';

export interface Shaped {
  status: number;
  contentType: string;
  body: Buffer | string;
}

/** Target statuses that are not the page the caller wanted. */
const isFailureStatus = (status: number): boolean => status >= 400;

/** A target status whose page is shaped and returned (not answered as an error of ours). */
export const isShapedStatus = (status: number, params: Pick<FetchParams, 'originalStatus' | 'allowedStatusCodes'>): boolean =>
  !isFailureStatus(status) || params.originalStatus || params.allowedStatusCodes.includes(status);

/** The target's answer as an error of ours, or undefined when it is the content to return. */
export function targetStatusError(page: Page, params: FetchParams): ApiError | undefined {
  if (isShapedStatus(page.status, params)) return undefined;
  const members = { target_status: page.status };
  if (page.status === 404) {
    return problem('RESP002', 'The target answered 404: the page does not exist there.', { members });
  }
  return problem(
    'RESP001',
    `The target answered ${page.status} under this configuration; try js_render=true and premium_proxy=true, or mode=auto.`,
    { members },
  );
}

/** The status this service answers with when the page is returned. */
export const answerStatus = (page: Page, params: FetchParams): number =>
  params.originalStatus || params.allowedStatusCodes.includes(page.status) ? page.status : 200;

const isHtmlPage = (page: Page): boolean => isHtml({ ...(page.contentType ? { contentType: page.contentType } : {}), body: page.body, rendered: page.html !== undefined });

const json = (status: number, value: unknown): Shaped => ({
  status,
  contentType: 'application/json; charset=utf-8',
  body: JSON.stringify(value),
});

/** The page as the HTML outputs take it: the rendered text, or the bytes as fetched (decoded where the output runs). */
export const htmlSourceOf = (page: Page): HtmlSource =>
  page.html !== undefined ? { html: page.html } : { bytes: page.body, ...(page.contentType ? { contentType: page.contentType } : {}) };

/** Which setting each cap and budget is, named in the refusal. */
const LIMIT_SETTINGS: Record<HtmlRefused['limit'], string> = {
  size: 'HTML_MAX_SIZE',
  nodes: 'HTML_MAX_NODES',
  depth: 'HTML_MAX_DEPTH',
  time: 'HTML_TIMEOUT_MS',
  memory: 'WORKER_THREAD_MEMORY_MB',
  busy: 'WORKER_THREAD_QUEUE',
};

/**
 * A page an HTML output refused, as the caller's problem: 413 `RESP005` ("Response too large", the
 * code a target answer past FETCH_MAX_BYTES already gets: the page is more than the service accepts,
 * and the same request would fail again), naming the cap or budget in `limit`. Full worker threads
 * are not the page's fault: 503 `service_unavailable` with Retry-After. Neither is charged.
 */
export function htmlProblem(refused: HtmlRefused): ApiError {
  const limit = LIMIT_SETTINGS[refused.limit];
  if (refused.limit === 'busy') {
    return problem('service_unavailable', `${refused.message}; retry in a few seconds. Nothing was charged.`, { headers: { 'Retry-After': '5' }, members: { limit } });
  }
  return problem('RESP005', `${refused.message} (${limit}); nothing was charged. Ask for the page as it is (no response_type, main_content, css_extractor, outputs, autoparse or extract) to get it anyway.`, {
    members: { limit, value: refused.value },
  });
}

/**
 * Whether shaping this Fetch's page runs an HTML output on it (what `shapeResponse` below does first),
 * so a page past a parse cap is refused whatever else it holds: its download may stop at the cap.
 * Outputs that run on HTML pages only are left to the full check when the page is not one.
 */
export function parsesPage(params: FetchParams, extract: boolean): boolean {
  if (extract) return true;
  if (params.jsonResponse) return params.mainContent === true;
  if (params.cssExtractor !== undefined || params.autoparse || params.outputs) return true;
  return params.responseType === 'markdown' || params.responseType === 'plaintext' || (params.mainContent === true && params.responseType === undefined);
}

export async function shapeResponse(page: Page, params: FetchParams, outputs: HtmlOutputs, signal?: AbortSignal): Promise<Shaped> {
  const status = answerStatus(page, params);
  // Decoded only for the shapes that read it here: the outputs take the page's bytes and decode where they run.
  let decoded: string | undefined;
  const html = (): string => (decoded ??= page.html ?? decodeHtml(page.body, page.contentType));
  const source = htmlSourceOf(page);
  const url = page.finalUrl;
  const mainFormat: MainContentFormat = params.responseType === 'markdown' || params.responseType === 'plaintext' ? params.responseType : 'html';
  const mainContent = (format: MainContentFormat): Promise<string> =>
    outputs.run('mainContent', source, { url, format, metadata: params.mainContentMetadata === true }, signal);

  if (params.jsonResponse) {
    const main = params.mainContent && isHtmlPage(page) ? await outputs.run('mainContentParts', { html: html() }, { url, format: mainFormat }, signal) : undefined;
    return json(status, {
      html: html(),
      status: page.status,
      headers: Object.fromEntries(foldHeaders(page.headers)),
      xhr: page.xhr ?? [],
      ...(page.instructionsReport ? { js_instructions_report: page.instructionsReport } : {}),
      ...(page.settledBy ? { settled_by: page.settledBy, settle_ms: page.settleMs } : {}),
      ...(page.screenshot ? { screenshot: page.screenshot.data.toString('base64') } : {}),
      ...(main ? { main_content: { ...main.metadata, content: main.content } } : {}),
    });
  }
  if (params.cssExtractor !== undefined) {
    const extracted = await outputs.run('cssExtractor', source, { url, spec: params.cssExtractor }, signal);
    // Validated before the fetch; a failure here is impossible but answered as the same 400.
    if (!extracted.ok) throw problem('RESP004', extracted.detail);
    return json(status, extracted.data);
  }
  if (params.autoparse) return json(status, await outputs.run('autoparse', source, { url }, signal));
  if (params.outputs) return json(status, await outputs.run('outputs', source, { url, kinds: params.outputs as OutputKind[] }, signal));
  if (page.screenshot) return { status, contentType: page.screenshot.contentType, body: page.screenshot.data };
  if (params.responseType === 'pdf' && page.pdf) return { status, contentType: 'application/pdf', body: page.pdf };
  if (params.responseType === 'markdown' && isHtmlPage(page)) {
    return { status, contentType: 'text/markdown; charset=utf-8', body: params.mainContent ? await mainContent('markdown') : await outputs.run('markdown', source, { url }, signal) };
  }
  if (params.responseType === 'plaintext' && isHtmlPage(page)) {
    return { status, contentType: 'text/plain; charset=utf-8', body: params.mainContent ? await mainContent('plaintext') : await outputs.run('plaintext', source, {}, signal) };
  }
  if (params.mainContent && params.responseType === undefined && isHtmlPage(page)) {
    return { status, contentType: 'text/html; charset=utf-8', body: await mainContent('html') };
  }
  if (page.html !== undefined) return { status, contentType: 'text/html; charset=utf-8', body: page.html };
  return { status, contentType: page.contentType ?? 'text/html; charset=utf-8', body: page.body };
}

/** Headers as one value per name (repeated values joined), for the JSON envelope. */
export function foldHeaders(headers: ReadonlyArray<readonly [string, string]>): Map<string, string> {
  const folded = new Map<string, string>();
  for (const [name, value] of headers) {
    const previous = folded.get(name);
    folded.set(name, previous === undefined ? value : name === 'set-cookie' ? `${previous}\n${value}` : `${previous}, ${value}`);
  }
  return folded;
}
