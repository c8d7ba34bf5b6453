/** The crawl object, its result items, a stop's answer and the download's lines, as the interface spells them. */
import type { DownloadItem, ResultsPage } from '../../core/crawls/commands';
import { contentIdOf, type CrawlDoc, type CrawlEndDoc, type CrawlView, type ResultItem } from '../../core/crawls/read';
import { isApiError } from '../../base/errors';
import { htmlProblem } from '../../core/fetch/respond';
import { isHtmlRefused, type HtmlOutputs } from '../../engine';

export function presentCrawl(view: CrawlView): Record<string, unknown> {
  const { doc } = view;
  return {
    crawl_id: doc._id,
    status: view.status,
    ...(view.end?.stop_reason ? { stop_reason: view.end.stop_reason } : {}),
    ...(view.status === 'failed' && view.end?.error ? { error: view.end.error } : {}),
    url: doc.url,
    ...(doc.depth !== undefined ? { depth: doc.depth } : {}),
    max_items: doc.max_items,
    max_pages: doc.max_pages,
    include_patterns: doc.include_patterns,
    exclude_patterns: doc.exclude_patterns,
    ...(doc.output_format ? { output_format: doc.output_format } : {}),
    ...(doc.main_content ? { main_content: true } : {}),
    ...(doc.track_changes ? { track_changes: true, ...(doc.change_tracking_tag !== undefined ? { change_tracking_tag: doc.change_tracking_tag } : {}) } : {}),
    respect_robots: doc.respect_robots === true,
    include_documents: doc.include_documents !== false,
    discovery: ['links'],
    extract_calls: 0,
    coverage: { ...doc.coverage },
    duplicates_removed: doc.duplicates_removed,
    ...(doc.webhook ? { webhook: { url: doc.webhook.url, signature: doc.webhook.signature, events: [...doc.webhook.events] } } : {}),
    created_at: doc.created_at.toISOString(),
    ...(view.end ? { finished_at: view.end.finished_at.toISOString() } : {}),
  };
}

export function presentResult(crawlId: string, outputFormat: boolean, item: ResultItem): Record<string, unknown> {
  // A tracked crawl's removed URL: in the previous tracked crawl, not in this one.
  if (item.changeStatus === 'removed') return { url: item.url, change_status: 'removed' };
  const change = item.changeStatus ? { change_status: item.changeStatus } : {};
  return { ...presentFound(crawlId, outputFormat, item), ...change };
}

function presentFound(crawlId: string, outputFormat: boolean, item: ResultItem): Record<string, unknown> {
  const stored = item.contentStatus ?? 'pending';
  const status = stored === 'skipped_document' ? 'skipped' : stored;
  const skipped = stored === 'skipped' ? { skip_reason: 'robots_txt' } : stored === 'skipped_document' ? { skip_reason: 'document' } : {};
  if (!outputFormat) return status === 'skipped' ? { url: item.url, content_status: status, ...skipped } : { url: item.url };
  return {
    url: item.url,
    content_status: status,
    ...skipped,
    ...(status === 'fetched' ? { content_url: `/v1/crawls/${crawlId}/contents/${contentIdOf(item)}` } : {}),
  };
}

/** The crawl object with one page of results. */
export function presentResults(page: ResultsPage): Record<string, unknown> {
  const crawlId = page.view.doc._id;
  const outputFormat = page.view.doc.output_format !== undefined;
  return {
    ...presentCrawl(page.view),
    results: page.items.map((item) => presentResult(crawlId, outputFormat, item)),
    next_cursor: page.nextCursor,
  };
}

export function presentStop(end: CrawlEndDoc): Record<string, unknown> {
  return {
    crawl_id: end._id,
    status: end.status,
    ...(end.stop_reason ? { stop_reason: end.stop_reason } : {}),
    finished_at: end.finished_at.toISOString(),
  };
}

/**
 * A kept page as the crawl serves it: by its output format, and only the main content when asked. The
 * conversion runs as a Fetch's does (engine HtmlOutputs: on a worker thread unless the page is small);
 * a page it refuses (past a budget: the caps held when it was kept) is the RESP005 problem. A
 * document is served as it was converted when kept.
 */
export async function keptPage(doc: Pick<CrawlDoc, 'output_format' | 'main_content'>, html: string, url: string, outputs: HtmlOutputs, document?: string): Promise<string> {
  if (document) return html;
  const markdown = doc.output_format === 'markdown';
  try {
    if (doc.main_content) return await outputs.run('mainContent', { html }, { url, format: markdown ? 'markdown' : 'html' });
    return markdown ? await outputs.run('markdown', { html }, { url }) : html;
  } catch (error) {
    throw isHtmlRefused(error) ? htmlProblem(error) : error;
  }
}

/** The download as NDJSON lines; kept pages in the crawl's output format (one that cannot be converted now reads as failed). */
export async function* downloadLines(view: CrawlView, items: AsyncIterable<DownloadItem>, outputs: HtmlOutputs): AsyncGenerator<string> {
  for await (const item of items) {
    const change = item.change ? { change_status: item.change } : {};
    if (!('status' in item)) {
      yield `${JSON.stringify({ url: item.url, ...change })}\n`;
    } else if (item.status === 'fetched') {
      const content = await keptPage(view.doc, item.html, item.url, outputs, item.document).catch((error: unknown) => {
        if (isApiError(error) && (error.code === 'RESP005' || error.code === 'service_unavailable')) return undefined;
        throw error;
      });
      yield content === undefined ? `${JSON.stringify({ url: item.url, content_status: 'failed', ...change })}\n` : `${JSON.stringify({ url: item.url, content_status: 'fetched', ...change, content })}\n`;
    } else {
      yield `${JSON.stringify({ url: item.url, content_status: item.status, ...change })}\n`;
    }
  }
}
