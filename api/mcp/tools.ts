/**
 * The service's surfaces as MCP tools. Each tool declares a JSON Schema and calls the same code as its
 * HTTP route: a Fetch through the Fetch pipeline (`fetchForAccount`) inside a concurrency slot (billed as the HTTP call), a
 * crawl through the crawl commands, domain preparation through the Extract commands, usage
 * through `usageDetails`. A refusal comes back as
 * a tool error whose text carries the problem document's `code` and `detail`.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../../core/accounts';
import { ApiError } from '../../base/errors';
import { withSlotUntil } from '../accounts/concurrency';
import { usageDetails } from '../accounts/usage-routes';
import type { StartBody } from '../../core/crawls/commands';
import { presentResults, presentStop } from '../crawls/present';
import { START_BODY } from '../crawls/schemas';
import type { ApiDeps } from '../deps';
import { checkExamples, normalizeDomain, preparedIssues, SUBMIT_BODY } from '../extract/routes';
import { changeTrackingJson, fetchWithHistory } from '../../core/changes';
import { FETCH_QUERY, fetchIssues, parseFetchParams } from '../../core/fetch/params';
import type { FetchPipeline } from '../../core/fetch/pipeline';
import { checkBody, checkQuery, type JsonSchema, type ObjectSchema } from '../http/routes';
import { convertDocumentTool } from './documents';
import { monitorTools } from './monitor-tools';
import type { ParsedQuery } from '../http/context';

type Args = Record<string, unknown>;

/** A tool's input: an object schema, which the route validator also takes. */
type ToolSchema = ObjectSchema & { type: 'object' };

interface ToolDefinition extends Tool {
  run(principal: Principal, args: Args, signal: AbortSignal): Promise<CallToolResult>;
}

const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });
const json = (value: unknown): CallToolResult => text(JSON.stringify(value, null, 2));

/** A refusal as the tool error an agent reads: the problem's code, status and detail. */
export function toolError(error: ApiError): CallToolResult {
  const problem = { code: error.code, status: error.status, detail: error.detail, ...error.members };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(problem) }], structuredContent: problem };
}

/** Tool arguments as the query strings the Fetch route validates, so both refuse alike. */
function fetchQuery(args: Args): ParsedQuery {
  const query: ParsedQuery = {};
  for (const [name, value] of Object.entries(args)) {
    if (value === undefined || value === null) continue;
    query[name] = typeof value === 'object' ? JSON.stringify(value) : String(value as string | number | boolean);
  }
  return query;
}

const prop = (name: string): JsonSchema => (FETCH_QUERY.properties[name] ?? {}) as JsonSchema;

const FETCH_INPUT: ToolSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    url: prop('url'),
    mode: { type: 'string', enum: ['auto', 'fixed'], default: 'auto', description: 'auto (default): cheapest configuration first, escalating only when blocked. fixed: exactly js_render/premium_proxy as given (implied when either is true).' },
    response_type: { type: 'string', enum: ['markdown', 'plaintext', 'html'], default: 'markdown', description: 'Shape of the page (markdown by default).' },
    main_content: { type: 'boolean', default: true, description: 'Only the main content (the article), without navigation, banners, comments and related links (default true); false for the whole page.' },
    main_content_metadata: { type: 'boolean', description: 'With main_content, the title, byline and date first, as front matter.' },
    css_extractor: { type: ['object', 'string'], description: 'Output keys mapped to CSS selectors; answers JSON instead of the page.' },
    outputs: prop('outputs'),
    js_render: prop('js_render'),
    premium_proxy: prop('premium_proxy'),
    wait_for: prop('wait_for'),
    wait: prop('wait'),
    document_page_markers: prop('document_page_markers'),
    document_speaker_notes: prop('document_speaker_notes'),
    screenshot: { type: 'boolean', description: 'Return an above-the-fold screenshot as an image.' },
    screenshot_fullpage: { type: 'boolean', description: 'Return a full-page screenshot as an image.' },
    // Change tracking (core/changes).
    track_changes: { type: 'boolean', description: 'Keep the page in the account’s history and add a second text part: whether it changed since the last tracked fetch (new, same, changed) and the diff.' },
    change_tracking_tag: prop('change_tracking_tag'),
  },
};

function fetchArgsToQuery(args: Args): ParsedQuery {
  const { mode, response_type: responseType, main_content: mainContent, ...rest } = args;
  const fixed = mode === 'fixed' || rest.js_render === true || rest.premium_proxy === true;
  const query = fetchQuery(rest);
  // Agents want the article: on unless the call turns it off (a non-boolean is refused as on HTTP).
  if (mainContent !== false) query.main_content = mainContent === undefined ? 'true' : String(mainContent as string);
  if (!fixed) query.mode = 'auto';
  if (responseType === undefined || responseType === 'markdown' || responseType === 'plaintext') query.response_type = (responseType as string | undefined) ?? 'markdown';
  return query;
}

async function runFetch(deps: ApiDeps, pipeline: FetchPipeline, principal: Principal, query: ParsedQuery, signal: AbortSignal): Promise<CallToolResult> {
  const params = parseFetchParams(checkQuery(FETCH_QUERY, query, fetchIssues));
  return withSlotUntil(deps.accounts, principal, signal, async (slotSignal) => {
    const result = await fetchWithHistory(deps.services.changes, pipeline, principal, { params, signal: slotSignal });
    if (!result.ok) throw result.error;
    const { shaped, cost } = result;
    const meta = { _meta: { credits: cost, status: shaped.status } };
    // track_changes: the outcome as a second part, after the page (json_response has it in the page already).
    const change = result.change && !params.jsonResponse ? [{ type: 'text' as const, text: JSON.stringify({ change_tracking: changeTrackingJson(result.change) }, null, 2) }] : [];
    if (shaped.contentType.startsWith('image/')) {
      const data = Buffer.isBuffer(shaped.body) ? shaped.body : Buffer.from(shaped.body);
      return { content: [{ type: 'image', data: data.toString('base64'), mimeType: shaped.contentType }, ...change], ...meta };
    }
    const body = Buffer.isBuffer(shaped.body) ? shaped.body.toString('utf8') : shaped.body;
    return { content: [...text(body).content, ...change], ...meta };
  });
}

const READ_INPUT: ToolSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['crawl_id'],
  properties: {
    crawl_id: { type: 'string', description: 'The crawl_id crawl_start returned.' },
    cursor: { type: 'string', description: 'The previous read’s next_cursor; omit for the first results.' },
    limit: { type: 'integer', minimum: 1, maximum: 1000, description: 'Results per read (default 100).' },
  },
};

const DOMAIN_INPUT: ToolSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['domain'],
  properties: { domain: { type: 'string', minLength: 1, maxLength: 253, description: 'The registrable domain, as submitted (acme-homes.com).' } },
};

const STOP_INPUT: ToolSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['crawl_id'],
  properties: { crawl_id: { type: 'string' } },
};

export function mcpTools(deps: ApiDeps): ToolDefinition[] {
  const { pipeline, crawls, extract: extractCommands } = deps.services;
  return [
    {
      name: 'fetch_page',
      description:
        'Retrieve one web page as Markdown (default), plain text or HTML, by default only its main content (main_content=false for the whole page); or CSS-extracted JSON (css_extractor), ' +
        'typed data (outputs: emails, links, tables, ...), or a screenshot image. A URL that is a document (PDF, DOCX, PPTX, XLSX, ODF, CSV) comes back converted, with its headings, lists and tables. ' +
        'Billed as GET /v1/ (1 credit plain, 5 rendered, 10 premium, 25 both; a PDF 1 credit more per started 50 pages past the first 50).',
      inputSchema: FETCH_INPUT,
      run: (principal, args, signal) => runFetch(deps, pipeline, principal, fetchArgsToQuery(args), signal),
    },
    convertDocumentTool(deps),
    {
      name: 'extract',
      description:
        'Structured data from a page of a prepared domain (extract=auto): JSON {parsed, html}. ' +
        'An unprepared domain is refused (REQS007; prepare it with extract_prepare_domain); nothing is charged then.',
      inputSchema: {
        type: 'object',
        additionalProperties: false,
        required: ['url'],
        properties: {
          url: prop('url'),
          fields: { type: 'array', items: { type: 'string' }, description: 'Only these fields (dotted paths) of the parsed result.' },
          js_render: prop('js_render'),
        },
      },
      run(principal, args, signal) {
        const fields = Array.isArray(args.fields) ? (args.fields as unknown[]).map(String) : undefined;
        const query = fetchQuery({ url: args.url, js_render: args.js_render, extract: 'auto', ...(fields ? { extract_fields: fields.join(',') } : {}) });
        return runFetch(deps, pipeline, principal, query, signal);
      },
    },
    {
      name: 'extract_prepare_domain',
      description:
        'Prepare a domain for the extract tool (free, limited by monthly preparation slots). Answers the preparation record; ' +
        'poll extract_domain_status until status is ready (or failed). A domain already prepared answers its record at once.',
      inputSchema: SUBMIT_BODY as ToolSchema,
      async run(principal, args) {
        const body = checkBody(SUBMIT_BODY, args, preparedIssues) as { domain: string; example_urls?: string[] };
        const domain = normalizeDomain(body.domain);
        const exampleUrls = checkExamples(domain, body.example_urls ?? []);
        return json(await extractCommands.submit(principal, { domain, ...(exampleUrls.length > 0 ? { example_urls: exampleUrls } : {}) }));
      },
    },
    {
      name: 'extract_domain_status',
      description: 'The preparation record of a domain this account submitted: status preparing, ready or failed, with its state and page kinds.',
      inputSchema: DOMAIN_INPUT,
      async run(principal, args) {
        const { domain } = checkBody(DOMAIN_INPUT, args, preparedIssues) as { domain: string };
        return json(await extractCommands.read(principal, normalizeDomain(domain)));
      },
    },
    {
      name: 'crawl_start',
      description: 'Start a crawl collecting the URLs behind a start page (with output_format=html also their HTML). Returns the crawl with its crawl_id; read it with crawl_read.',
      inputSchema: START_BODY as ToolSchema,
      async run(principal, args) {
        const crawlId = await crawls.start(principal, checkBody(START_BODY, args) as unknown as StartBody, undefined);
        return json(presentResults(await crawls.read(crawlId, principal.accountId, undefined, 0)));
      },
    },
    {
      name: 'crawl_read',
      description: 'Read a crawl: its status and one page of results. Pass next_cursor back as cursor for the next page; next_cursor is null once the crawl ended and all results were read.',
      inputSchema: READ_INPUT,
      async run(principal, args) {
        const input = checkBody(READ_INPUT, args);
        return json(presentResults(await crawls.read(input.crawl_id as string, principal.accountId, input.cursor as string | undefined, (input.limit as number | undefined) ?? 100)));
      },
    },
    {
      name: 'crawl_stop',
      description: 'Stop a running crawl; an ended crawl answers its final state.',
      inputSchema: STOP_INPUT,
      async run(principal, args) {
        const input = checkBody(STOP_INPUT, args);
        return json(presentStop(await crawls.stop(input.crawl_id as string, principal.accountId)));
      },
    },
    {
      name: 'plan_usage',
      description: 'The plan’s period, credits used and left, concurrency limit and slots in use.',
      inputSchema: { type: 'object', additionalProperties: false, properties: {} },
      run: async (principal) => json(await usageDetails(deps.accounts, principal)),
    },
    ...monitorTools(deps),
  ];
}

/** Runs a tool; refusals become tool errors, anything else is the server's fault and is thrown. */
export async function callTool(tools: ToolDefinition[], principal: Principal, name: string, args: Args, signal: AbortSignal): Promise<CallToolResult> {
  const tool = tools.find((candidate) => candidate.name === name);
  if (!tool) return toolError(new ApiError('invalid_request', `No tool named "${name}".`));
  try {
    return await tool.run(principal, args, signal);
  } catch (error) {
    if (error instanceof ApiError) return toolError(error);
    throw error;
  }
}

export type { ToolDefinition };
