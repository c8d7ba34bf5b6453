/**
 * The Crawl surface under `/v1/crawls`: routes as data. Each handler validates, calls one crawl
 * command (core/crawls/commands.ts) and presents its result (present.ts).
 */
import { Readable } from 'node:stream';
import { type StartBody } from '../../core/crawls/commands';
import { problem } from '../../base/errors';
import { authenticate, principalOf, securityOf } from '../auth/authenticate';
import type { ApiDeps } from '../deps';
import { defaultIssues, type IssueMapper, type ResponseSpec, type Route } from '../http/routes';
import { startIssues } from './issues';
import { contentDisposition, markThirdParty } from '../http/third-party';
import { downloadLines, keptPage, presentCrawl, presentResults, presentStop } from './present';
import { DELIVERIES } from '../batch/response-schemas';
import { presentDeliveries } from '../webhooks/present-deliveries';
import { CONTENT_QUERY, CRAWL, CRAWL_LIST, KEY_QUERY, LIST_QUERY, READ_QUERY, START_BODY, STOP_RESPONSE } from './schemas';

/** On the list, a bad `limit` or `cursor` is `invalid_request`. */
const listIssues: IssueMapper = (issue) =>
  issue.kind === 'invalid' ? problem('invalid_request', `"${issue.field}" ${issue.message}.`) : defaultIssues(issue);

const json = (description: string, schema: Record<string, unknown>): ResponseSpec => ({ description, content: { 'application/json': { schema } } });

const errors = {
  400: { description: 'Invalid request, parameter or cursor' },
  401: { description: 'API key missing, malformed or unknown' },
  404: { description: 'No such crawl on the account' },
  503: { description: 'A component is down, or no worker runs for work to start (service_unavailable, with Retry-After)' },
};

export function crawlRoutes(deps: ApiDeps): Route[] {
  const { crawls } = deps.services;
  const common = { tags: ['Crawl'], security: securityOf('crawl'), before: [authenticate(deps, 'crawl')] };
  const crawlIdOf = (params: Record<string, string>): string => params.crawl_id ?? '';
  return [
    {
      ...common,
      method: 'POST',
      path: '/v1/crawls',
      operationId: 'startCrawl',
      summary: 'Start a crawl.',
      description: 'Collects the URLs behind a start page (optionally each page’s HTML). Header `Idempotency-Key` (at most 255 characters): the same key and body return the same crawl.',
      query: KEY_QUERY,
      body: START_BODY,
      issues: startIssues,
      responses: {
        202: { ...json('Crawl started', CRAWL), headers: { Location: { description: 'Path of the crawl', schema: { type: 'string' } } } },
        ...errors,
        400: { description: 'Invalid request or parameter; for a webhook, callback_url_must_be_https, callback_url_unresolvable or webhook_signing_requires_active_key' },
        402: { description: 'No credits left (AUTH004)' },
        409: { description: 'A request with this Idempotency-Key is in progress' },
        422: { description: 'Invalid start URL, out-of-range value, an unknown webhook event, change_tracking_tag without track_changes, or Idempotency-Key reused with another body' },
        429: { description: 'The account runs its active jobs already (Retry-After: 30)' },
      },
      async handler(ctx, input) {
        const principal = principalOf(ctx);
        const key = ctx.get('Idempotency-Key');
        // Work accepted while no worker runs would not move (readiness.ts): refused with 503 instead.
        await deps.readiness.requireWorker();
        const crawlId = await crawls.start(principal, input.body as StartBody, ctx.headers['idempotency-key'] === undefined ? undefined : key);
        ctx.status = 202;
        ctx.set('Location', `/v1/crawls/${crawlId}`);
        ctx.body = presentResults(await crawls.read(crawlId, principal.accountId, undefined, 0));
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/v1/crawls',
      operationId: 'listCrawls',
      summary: 'List crawls, newest first.',
      query: LIST_QUERY,
      issues: listIssues,
      responses: { 200: json('A page of crawls (without results)', CRAWL_LIST), ...errors },
      async handler(ctx, input) {
        const limit = (input.query.limit as number | undefined) ?? 20;
        if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw problem('invalid_request', '"limit" must be 1 to 100.');
        const page = await crawls.list(principalOf(ctx).accountId, input.query.cursor as string | undefined, limit);
        ctx.body = { crawls: page.crawls.map(presentCrawl), ...(page.nextCursor ? { next_cursor: page.nextCursor } : {}) };
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/v1/crawls/{crawl_id}',
      operationId: 'readCrawl',
      summary: 'Read a crawl and one page of its results.',
      query: READ_QUERY,
      responses: { 200: json('The crawl with a page of results', CRAWL), ...errors },
      async handler(ctx, input) {
        ctx.set('Cache-Control', 'no-store');
        ctx.body = presentResults(await crawls.read(crawlIdOf(input.params), principalOf(ctx).accountId, input.query.cursor as string | undefined, input.query.limit as number | undefined));
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/v1/crawls/{crawl_id}/download',
      operationId: 'downloadCrawl',
      summary: 'Download all results as NDJSON (`{crawl_id}.jsonl`).',
      query: KEY_QUERY,
      responses: {
        200: {
          description: 'One JSON object per line',
          content: { 'application/x-ndjson': {} },
          headers: { 'X-Crawl-Status': { description: 'The crawl status', schema: { type: 'string' } } },
        },
        ...errors,
      },
      async handler(ctx, input) {
        const view = await crawls.view(crawlIdOf(input.params), principalOf(ctx).accountId);
        ctx.set('X-Crawl-Status', view.status);
        ctx.set('Content-Disposition', `attachment; filename="${view.doc._id}.jsonl"`);
        ctx.set('Cache-Control', 'no-store');
        markThirdParty(ctx);
        ctx.type = 'application/x-ndjson';
        ctx.body = Readable.from(downloadLines(view, crawls.download(view), deps.fetching.html), { objectMode: false });
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/v1/crawls/{crawl_id}/contents/{content_id}',
      operationId: 'readCrawlContent',
      summary: 'Read one kept page: HTML, or Markdown for a crawl with output_format=markdown.',
      query: CONTENT_QUERY,
      responses: { 200: { description: 'The page', content: { 'text/html': {}, 'text/markdown': {} } }, ...errors },
      async handler(ctx, input) {
        const contentId = input.params.content_id ?? '';
        const content = await crawls.content(crawlIdOf(input.params), principalOf(ctx).accountId, contentId);
        const markdown = content.view.doc.output_format === 'markdown';
        ctx.type = markdown ? 'text/markdown; charset=utf-8' : 'text/html; charset=utf-8';
        markThirdParty(ctx);
        ctx.set('Content-Disposition', contentDisposition(input.query.download === true, `${contentId}.${markdown ? 'md' : 'html'}`));
        ctx.body = await keptPage(content.view.doc, content.html, content.url, deps.fetching.html, content.document);
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/v1/crawls/{crawl_id}/webhook/deliveries',
      operationId: 'listCrawlWebhookDeliveries',
      summary: 'The crawl’s newest webhook events (at most 20), each with every delivery attempt.',
      description: 'Shaped like a Batch job’s deliveries: `run_id` is the crawl id. Empty for a crawl without a webhook.',
      query: KEY_QUERY,
      responses: { 200: json('`{deliveries}`', DELIVERIES), ...errors },
      async handler(ctx, input) {
        ctx.set('Cache-Control', 'no-store');
        ctx.body = presentDeliveries(await crawls.deliveries(crawlIdOf(input.params), principalOf(ctx).accountId));
      },
    },
    {
      ...common,
      method: 'POST',
      path: '/v1/crawls/{crawl_id}/stop',
      operationId: 'stopCrawl',
      summary: 'Stop a crawl.',
      description: 'No new page is fetched after the stop; pages in flight finish, are billed and are kept for up to 10 minutes. A crawl that already ended answers its final state.',
      query: KEY_QUERY,
      responses: { 200: json('The crawl’s state after the stop', STOP_RESPONSE), ...errors },
      async handler(ctx, input) {
        ctx.body = presentStop(await crawls.stop(crawlIdOf(input.params), principalOf(ctx).accountId));
      },
    },
  ];
}
