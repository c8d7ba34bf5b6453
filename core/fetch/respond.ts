/**
 * From a retrieved page to the Fetch response: whether the target's status is a success, an error, or
 * passed through (`original_status`, `allowed_status_codes`), and which shape the body takes.
 *
 * Body precedence: json_response envelope > css_extractor > autoparse > outputs > screenshot >
 * response_type (markdown, plaintext, pdf) > the target's content as received. `main_content` narrows
 * the Markdown, plain text and HTML page to its article, and adds the article to the JSON envelope.
 */
import { problem, type ApiError } from '../../base/errors';
import { autoparse, cssExtract, decodeHtml, extractOutputs, findMainContent, isHtml, renderMainContent, toMarkdown, toPlainText, type MainContentFormat, type OutputKind, type Page } from '../../engine';
import type { FetchParams } from './params';

export interface Shaped {
  status: number;
  contentType: string;
  body: Buffer | string;
}

/** Target statuses that are not the page the caller wanted. */
const isFailureStatus = (status: number): boolean => status >= 400;

/** The target's answer as an error of ours, or undefined when it is the content to return. */
export function targetStatusError(page: Page, params: FetchParams): ApiError | undefined {
  if (!isFailureStatus(page.status) || params.originalStatus || params.allowedStatusCodes.includes(page.status)) return undefined;
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

export function shapeResponse(page: Page, params: FetchParams): Shaped {
  const status = answerStatus(page, params);
  // Decoded only for the shapes that read it: the page as received goes out as its bytes.
  let decoded: string | undefined;
  const html = (): string => (decoded ??= page.html ?? decodeHtml(page.body, page.contentType));
  const url = page.finalUrl;
  const mainFormat: MainContentFormat = params.responseType === 'markdown' || params.responseType === 'plaintext' ? params.responseType : 'html';
  const mainContent = (format: MainContentFormat): string =>
    renderMainContent(findMainContent(html(), url), format, { metadata: params.mainContentMetadata });

  if (params.jsonResponse) {
    const main = params.mainContent && isHtmlPage(page) ? findMainContent(html(), url) : undefined;
    return json(status, {
      html: html(),
      status: page.status,
      headers: Object.fromEntries(foldHeaders(page.headers)),
      xhr: page.xhr ?? [],
      ...(page.instructionsReport ? { js_instructions_report: page.instructionsReport } : {}),
      ...(page.settledBy ? { settled_by: page.settledBy, settle_ms: page.settleMs } : {}),
      ...(page.screenshot ? { screenshot: page.screenshot.data.toString('base64') } : {}),
      ...(main ? { main_content: { ...main.metadata, content: renderMainContent(main, mainFormat) } } : {}),
    });
  }
  if (params.cssExtractor !== undefined) {
    const extracted = cssExtract(html(), url, params.cssExtractor);
    // Validated before the fetch; a failure here is impossible but answered as the same 400.
    if (!extracted.ok) throw problem('RESP004', extracted.detail);
    return json(status, extracted.data);
  }
  if (params.autoparse) return json(status, autoparse(html(), url));
  if (params.outputs) return json(status, extractOutputs(html(), url, params.outputs as OutputKind[]));
  if (page.screenshot) return { status, contentType: page.screenshot.contentType, body: page.screenshot.data };
  if (params.responseType === 'pdf' && page.pdf) return { status, contentType: 'application/pdf', body: page.pdf };
  if (params.responseType === 'markdown' && isHtmlPage(page)) {
    return { status, contentType: 'text/markdown; charset=utf-8', body: params.mainContent ? mainContent('markdown') : toMarkdown(html(), url) };
  }
  if (params.responseType === 'plaintext' && isHtmlPage(page)) {
    return { status, contentType: 'text/plain; charset=utf-8', body: params.mainContent ? mainContent('plaintext') : toPlainText(html()) };
  }
  if (params.mainContent && params.responseType === undefined && isHtmlPage(page)) {
    return { status, contentType: 'text/html; charset=utf-8', body: mainContent('html') };
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
