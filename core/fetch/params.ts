/**
 * The Fetch parameters: one JSON Schema (validation and the OpenAPI document) plus the rules that
 * tie parameters together (`wait` needs `js_render`, `screenshot_quality` needs jpeg, ...). Every
 * failure is `REQS004` naming the parameter, before anything is fetched or charged. The HTTP route,
 * the MCP tools and Batch tasks read the interface's names here and nowhere else.
 */
import { BLOCKABLE_TYPES, OUTPUT_KINDS, parseCssExtractor, parseOutputKinds, type BrowserOptions, type OutputKind } from '../../engine';
import { problem, type ApiError } from '../../base/errors';
import type { IssueMapper, ObjectSchema } from '../../base/validation';
import { parseBrowserParams, type BrowserParams } from './browser-params';
import { CHANGE_QUERY_PROPERTIES, parseChangeParams, type ChangeParams } from '../changes/params';

const bool = (description: string) => ({ type: 'boolean', description });

export const FETCH_QUERY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    apikey: { type: 'string', description: 'The API key.' },
    url: { type: 'string', format: 'uri', maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#\\s]', description: 'Page to retrieve: a public http or https URL (REQS001 for a private or refused address).' },
    mode: { type: 'string', enum: ['auto'], description: 'Start from the cheapest configuration and escalate only when blocked.' },
    js_render: bool('Render in a headless browser.'),
    js_instructions: { type: 'string', description: 'JSON array of browser instructions. Requires js_render.' },
    custom_headers: bool("Forward the caller's own request headers to the target."),
    premium_proxy: bool('Route through residential proxies.'),
    proxy_country: { type: 'string', pattern: '^[a-zA-Z]{2}$', description: 'Two-letter country. Requires premium_proxy.' },
    session_id: { type: 'integer', minimum: 0, maximum: 99999, description: 'Reuses the same proxy for up to 10 minutes.' },
    original_status: bool("Return the target's own HTTP status."),
    allowed_status_codes: { type: 'string', pattern: '^\\s*[1-5]\\d\\d\\s*(,\\s*[1-5]\\d\\d\\s*)*$', description: 'Comma-separated status codes (at least one) whose body is returned instead of an error.' },
    wait_for: { type: 'string', minLength: 1, description: 'CSS selector to wait for. Requires js_render.' },
    wait: { type: 'integer', minimum: 0, maximum: 30000, description: 'Milliseconds to wait after load. Requires js_render.' },
    block_resources: { type: 'string', description: `Comma-separated resource types to block: ${BLOCKABLE_TYPES.join(', ')}, or none.` },
    json_response: bool('Return a JSON envelope with the HTML and the XHR/fetch calls the page made.'),
    css_extractor: { type: 'string', description: 'JSON object mapping output keys to CSS selectors.' },
    extract: { type: 'string', enum: ['auto', 'native', 'standard'], description: 'Structured extraction on prepared domains.' },
    extract_fields: { type: 'string', description: 'Comma-separated fields to return.' },
    autoparse: bool('Deprecated: general-purpose parsed JSON.'),
    response_type: { type: 'string', enum: ['markdown', 'plaintext', 'pdf'], description: 'Output format.' },
    main_content: bool(
      'Extension of this service: only the main content of the page (the article), without navigation, banners, share bars, comments and related links; ' +
        'as Markdown or plain text with response_type, else as HTML (an <article>); the whole page when no block stands out. ' +
        'With json_response, adds main_content {title, byline, date, content}. Not with response_type=pdf. No extra credits.',
    ),
    respect_robots: bool('Extension of this service: fetch only what the site’s robots.txt allows (403 REQS009 otherwise, nothing charged). Default false: the caller named this URL.'),
    main_content_metadata: bool('Extension of this service: with main_content, the title, byline and date the page states first, as front matter (Markdown, plain text) or a <head> (HTML).'),
    // Documents (core/documents): our extension.
    document_page_markers: bool(
      'Extension of this service: when the target is a document (PDF, DOCX, PPTX, XLSX, ODT/ODS/ODP, CSV) converted by response_type=markdown|plaintext or json_response, ' +
        'mark page boundaries (`<!-- page N -->` / `<!-- slide N -->` in Markdown, a form feed in plain text). Default true.',
    ),
    document_speaker_notes: bool('Extension of this service: with a presentation (PPTX, ODP) converted, each slide’s speaker notes after its content. Default false.'),
    screenshot: bool('Above-the-fold screenshot. Requires js_render.'),
    screenshot_fullpage: bool('Full-page screenshot. Requires js_render.'),
    screenshot_selector: { type: 'string', minLength: 1, description: 'Screenshot of the matching element. Requires js_render.' },
    screenshot_format: { type: 'string', enum: ['png', 'jpeg', 'jpg'], description: 'png (default) or jpeg.' },
    screenshot_quality: { type: 'integer', minimum: 1, maximum: 100, description: 'JPEG quality, 1 to 100; only with screenshot_format=jpeg (REQS004 otherwise).' },
    outputs: { type: 'string', description: `Comma-separated data types: ${OUTPUT_KINDS.join(', ')}, or * for all.` },
    device: { type: 'string', enum: ['desktop', 'mobile'], description: 'Device to emulate. Requires js_render.' },
    window_width: { type: 'integer', minimum: 100, maximum: 4096, description: 'Viewport width. Requires js_render.' },
    window_height: { type: 'integer', minimum: 100, maximum: 4096, description: 'Viewport height. Requires js_render.' },
    // Change tracking (core/changes): track_changes, change_tracking_tag, as_of.
    ...CHANGE_QUERY_PROPERTIES,
  },
};

export const fetchIssues: IssueMapper = (issue) => {
  switch (issue.kind) {
    case 'malformed_body':
      return problem('REQS004', issue.message);
    case 'unknown':
      return problem('REQS004', `Unknown parameter "${issue.field}".`, { members: { parameter: issue.field } });
    case 'missing':
      return problem('REQS004', `Parameter "${issue.field}" is required.`, { members: { parameter: issue.field } });
    case 'invalid':
      return problem('REQS004', `Parameter "${issue.field}" ${issue.message}.`, { members: { parameter: issue.field } });
  }
};

const invalid = (parameter: string, why: string): ApiError =>
  problem('REQS004', `Parameter "${parameter}" ${why}.`, { members: { parameter } });

/** The Fetch parameters, parsed; change tracking's (`trackChanges`, `changeTrackingTag`, `asOf`) are core/changes/params.ts's. */
export interface FetchParams extends ChangeParams {
  url: URL;
  auto: boolean;
  jsRender: boolean;
  customHeaders: boolean;
  premiumProxy: boolean;
  proxyCountry?: string;
  sessionId?: number;
  originalStatus: boolean;
  allowedStatusCodes: number[];
  jsonResponse: boolean;
  cssExtractor?: string;
  extract?: 'auto' | 'native' | 'standard';
  extractFields?: string[];
  autoparse: boolean;
  responseType?: 'markdown' | 'plaintext' | 'pdf';
  /** Only the page's main content (our extension), with its metadata first when `mainContentMetadata`. */
  mainContent: boolean;
  mainContentMetadata: boolean;
  /** Ask the site's robots.txt before fetching (our extension). */
  respectRobots: boolean;
  /** A document target: page markers in its text (default true), speaker notes of slides (default false). Our extension. */
  documentPageMarkers: boolean;
  documentSpeakerNotes: boolean;
  outputs?: OutputKind[];
  /** Everything only a browser does (instructions, waits, screenshots, PDF, device, blocking). */
  browser: BrowserOptions;
  /** Whether the request asks for something only a browser gives. */
  needsBrowser: boolean;
}

const csv = (value: string): string[] =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);

function parseUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw invalid('url', 'is not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('url', 'must use http or https');
  if (url.username || url.password) throw invalid('url', 'must not carry credentials');
  return url;
}

function parseStatusCodes(raw: string | undefined): number[] {
  if (raw === undefined) return [];
  const codes = csv(raw);
  if (codes.length === 0) throw invalid('allowed_status_codes', 'must list at least one status code');
  return codes.map((code) => {
    if (!/^\d{3}$/.test(code) || Number(code) < 100 || Number(code) > 599) {
      throw invalid('allowed_status_codes', `has "${code}", which is not an HTTP status code`);
    }
    return Number(code);
  });
}

/**
 * Turns the query the schema validated (and typed) into options, enforcing the rules between
 * parameters; nothing is parsed from strings a second time.
 */
export function parseFetchParams(query: Record<string, unknown>): FetchParams {
  const q = query as Record<string, string | number | boolean | undefined>;
  const flag = (name: string): boolean => q[name] === true;
  const text = (name: string): string | undefined => (typeof q[name] === 'string' ? (q[name] as string) : undefined);

  const auto = text('mode') === 'auto';
  const jsRender = flag('js_render');
  const premiumProxy = flag('premium_proxy');
  const proxyCountry = text('proxy_country')?.toLowerCase();
  if (proxyCountry && !premiumProxy && !auto) throw invalid('proxy_country', 'requires premium_proxy=true');

  // A browser is available with js_render, and under mode=auto, which then starts at a rendering rung.
  const browser = parseBrowserParams(query as BrowserParams, jsRender || auto);
  if (!browser.ok) throw invalid(browser.error.parameter ?? 'js_render', browser.error.detail.replace(/^[\w]+: /, ''));

  const cssExtractor = text('css_extractor');
  if (cssExtractor !== undefined) {
    const parsed = parseCssExtractor(cssExtractor);
    if (!parsed.ok) throw problem('RESP004', parsed.detail, { members: { parameter: 'css_extractor' } });
  }
  let outputs: OutputKind[] | undefined;
  const rawOutputs = text('outputs');
  if (rawOutputs !== undefined) {
    const parsed = parseOutputKinds(rawOutputs);
    if (!parsed.ok) throw invalid('outputs', parsed.detail);
    outputs = parsed.kinds;
  }
  const responseType = text('response_type') as FetchParams['responseType'];
  const mainContent = flag('main_content');
  if (mainContent && responseType === 'pdf') throw invalid('main_content', 'applies to HTML, Markdown and plain text, not to response_type=pdf');
  const mainContentMetadata = flag('main_content_metadata');
  if (mainContentMetadata && !mainContent) throw invalid('main_content_metadata', 'requires main_content=true');
  const value = browser.value;
  const needsBrowser = Boolean(value.instructions || value.waitFor || value.wait !== undefined || value.screenshot || value.pdf || value.device || value.windowWidth || value.windowHeight);
  const jsonResponse = flag('json_response');
  return {
    url: parseUrl(text('url') ?? ''),
    auto,
    jsRender,
    customHeaders: flag('custom_headers'),
    premiumProxy,
    proxyCountry,
    sessionId: typeof q.session_id === 'number' ? q.session_id : undefined,
    originalStatus: flag('original_status'),
    allowedStatusCodes: parseStatusCodes(text('allowed_status_codes')),
    jsonResponse,
    cssExtractor,
    extract: text('extract') as FetchParams['extract'],
    extractFields: text('extract_fields') === undefined ? undefined : csv(text('extract_fields') ?? ''),
    autoparse: flag('autoparse'),
    responseType,
    mainContent,
    mainContentMetadata,
    respectRobots: flag('respect_robots'),
    documentPageMarkers: q.document_page_markers !== false,
    documentSpeakerNotes: flag('document_speaker_notes'),
    outputs,
    browser: { ...value, ...(jsonResponse ? { captureXhr: true } : {}) },
    needsBrowser,
    ...parseChangeParams(query, { screenshot: Boolean(value.screenshot), pdf: Boolean(value.pdf), instructions: Boolean(value.instructions) }),
  };
}
