/** The crawl object and its result items as the interface spells them. */
import type { CrawlView, ResultItem } from '../../core/crawls/read';

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
    discovery: ['links'],
    extract_calls: 0,
    coverage: { ...doc.coverage },
    duplicates_removed: doc.duplicates_removed,
    created_at: doc.created_at.toISOString(),
    ...(view.end ? { finished_at: view.end.finished_at.toISOString() } : {}),
  };
}

export function presentResult(crawlId: string, outputFormat: boolean, item: ResultItem): Record<string, unknown> {
  if (!outputFormat) return { url: item.url };
  const status = item.contentStatus ?? 'pending';
  return {
    url: item.url,
    content_status: status,
    ...(status === 'fetched' ? { content_url: `/v1/crawls/${crawlId}/contents/${item.k}-${item.index}` } : {}),
  };
}
