/**
 * A crawl whose workflow gives up (its publish failed for good, or it was cancelled) still ends, as
 * every crawl does: its end recorded (one a stop call recorded first stays), the crawl settled with the
 * counts last published, and its end event told once. Every step is idempotent (the end is a claim by
 * insert, the event is written once under the crawl's end key), so a retried attempt on another worker
 * finishes what a killed one began.
 */
import { recordEnd } from '../ends';
import { crawlCollections, type CrawlDoc } from '../store';
import type { PublishDeps } from './publish';

export interface FailCrawlInput {
  crawlId: string;
  /** Why the workflow gave up, as the crawl's `error.detail` says it. */
  detail: string;
}

export async function failCrawl(deps: Omit<PublishDeps, 'changes'>, input: FailCrawlInput): Promise<void> {
  const { crawlId } = input;
  const end = await recordEnd(deps, crawlId, { status: 'failed', error: { code: 'internal_error', detail: input.detail } });
  const { crawls } = crawlCollections(deps.db);
  const doc = await crawls.findOne({ _id: crawlId });
  deps.runtime.forget(crawlId);
  if (!doc) return;
  const set: Partial<CrawlDoc> = { status: end.status, finished_at: end.finished_at, settled: true };
  if (end.stop_reason) set.stop_reason = end.stop_reason;
  if (end.error) set.error = end.error;
  await crawls.updateOne({ _id: crawlId }, { $set: set });
  if (doc.webhook && deps.announcer) await deps.announcer.ended(doc, end, doc.coverage);
}
