/**
 * What the crawl routes do, all from MongoDB (the workflow is only signalled, never queried): read a
 * crawl and a page of results, list crawls, stream the download, serve a page's HTML, stop a crawl.
 */
import { toMarkdown } from '../../engine/outputs';
import { Readable } from 'node:stream';
import { decodeListCursor, decodeResultCursor, encodeListCursor, encodeResultCursor, START } from '../../core/crawls/cursor';
import { CrawlReader, type CrawlView } from '../../core/crawls/read';
import { ids, isDuplicateKey, type CrawlEndDoc } from '../../core/crawls/store';
import { crawlWorkflowId, STOP_CRAWL_SIGNAL } from '../../core/crawls/workflow-names';
import { problem } from '../../core/errors';
import type { ApiDeps } from '../deps';
import type { ActiveJobs } from '../../core/jobs/active-jobs';
import { presentCrawl, presentResult } from './present';

export const DEFAULT_READ_LIMIT = 1000;
const DOWNLOAD_PAGE = 1000;
/** Stored pages read per look-up while a download streams. */
const CONTENT_BATCH = 100;

export class CrawlHandlers {
  readonly reader: CrawlReader;

  constructor(
    private readonly deps: ApiDeps,
    private readonly activeJobs: ActiveJobs,
  ) {
    this.reader = new CrawlReader(deps.db.db);
  }

  async view(crawlId: string, accountId: string): Promise<CrawlView> {
    const view = /^c_[0-9a-z]{1,40}$/.test(crawlId) ? await this.reader.load(crawlId, accountId) : null;
    if (!view) throw problem('crawl_not_found', `No crawl ${crawlId} on this account.`);
    return view;
  }

  /** The crawl object with one page of results from `cursor`. */
  async read(crawlId: string, accountId: string, cursor: string | undefined, limit: number = DEFAULT_READ_LIMIT): Promise<Record<string, unknown>> {
    const view = await this.view(crawlId, accountId);
    let position = START;
    if (cursor !== undefined) {
      const decoded = decodeResultCursor(crawlId, cursor);
      if (!decoded.ok) {
        throw problem('invalid_cursor', decoded.reason === 'other_crawl' ? 'This cursor belongs to another crawl.' : 'This cursor is not a cursor of this crawl.');
      }
      position = decoded.position;
    }
    const page = await this.reader.results(view, position, limit);
    const outputFormat = view.doc.output_format !== undefined;
    const finished = page.exhausted && view.settled;
    return {
      ...presentCrawl(view),
      results: page.items.map((item) => presentResult(crawlId, outputFormat, item)),
      next_cursor: finished ? null : encodeResultCursor(crawlId, page.next),
    };
  }

  async list(accountId: string, cursor: string | undefined, limit: number): Promise<Record<string, unknown>> {
    let before: string | undefined;
    if (cursor !== undefined) {
      before = decodeListCursor(cursor);
      if (!before) throw problem('invalid_request', '`cursor` is not a cursor of this list.');
    }
    const docs = await this.reader.collections.crawls
      .find({ account_id: accountId, ...(before ? { _id: { $lt: before } } : {}) })
      .sort({ _id: -1 })
      .limit(limit + 1)
      .toArray();
    const page = docs.slice(0, limit);
    const crawls = await Promise.all(page.map(async (doc) => presentCrawl(await this.reader.view(doc))));
    const last = page[page.length - 1];
    return { crawls, ...(docs.length > limit && last ? { next_cursor: encodeListCursor(last._id) } : {}) };
  }

  /** Stops a running crawl (idempotent: an ended crawl answers its final state). */
  async stop(crawlId: string, accountId: string): Promise<Record<string, unknown>> {
    const view = await this.view(crawlId, accountId);
    let end = view.end;
    if (!end) {
      const { ends } = this.reader.collections;
      const record: CrawlEndDoc = { _id: crawlId, status: 'stopped', stop_reason: 'user', finished_at: new Date() };
      try {
        await ends.insertOne(record);
        end = record;
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        const existing = await ends.findOne({ _id: crawlId });
        if (!existing) throw error;
        end = existing;
      }
      await this.activeJobs.release(crawlId).catch(() => undefined);
      // The record already stops the crawl (slices check it); the signal only makes it prompt.
      await this.deps.temporal.client.workflow
        .getHandle(crawlWorkflowId(crawlId))
        .signal(STOP_CRAWL_SIGNAL)
        .catch((error: unknown) => this.deps.log.warn('crawl stop signal not delivered', { crawl_id: crawlId, error }));
    }
    return {
      crawl_id: crawlId,
      status: end.status,
      ...(end.stop_reason ? { stop_reason: end.stop_reason } : {}),
      finished_at: end.finished_at.toISOString(),
    };
  }

  /** Every published result as NDJSON lines, streamed. */
  download(view: CrawlView): Readable {
    return Readable.from(this.lines(view), { objectMode: false });
  }

  private async *lines(view: CrawlView): AsyncGenerator<string> {
    const crawlId = view.doc._id;
    if (!view.doc.output_format) {
      for await (const item of this.allResults(view)) yield `${JSON.stringify({ url: item.url })}\n`;
      return;
    }
    // Results first (bounded by max_items), then their stored pages by computed id, then what has no page.
    const results = new Map<string, { url: string; status: string }>();
    for await (const item of this.allResults(view)) results.set(`${item.k}-${item.index}`, { url: item.url, status: item.contentStatus ?? 'pending' });
    const fetched = [...results].filter(([, result]) => result.status === 'fetched').map(([contentId]) => contentId);
    for (let from = 0; from < fetched.length; from += CONTENT_BATCH) {
      const batch = fetched.slice(from, from + CONTENT_BATCH).map((contentId) => ids.content(crawlId, contentId, 0));
      for (const doc of await this.reader.collections.contents.find({ _id: { $in: batch } }).toArray()) {
        const result = results.get(doc.content_id);
        if (!result) continue;
        const html = await this.reader.joinChunks(crawlId, doc);
        const content = view.doc.output_format === 'markdown' ? toMarkdown(html, result.url) : html;
        yield `${JSON.stringify({ url: result.url, content_status: 'fetched', content })}\n`;
        results.delete(doc.content_id);
      }
    }
    for (const result of results.values()) {
      // A page marked fetched whose HTML is missing is reported failed rather than without content.
      const status = result.status === 'fetched' ? 'failed' : result.status;
      yield `${JSON.stringify({ url: result.url, content_status: status })}\n`;
    }
  }

  private async *allResults(view: CrawlView) {
    let position = START;
    for (;;) {
      const page = await this.reader.results(view, position, DOWNLOAD_PAGE);
      yield* page.items;
      if (page.exhausted || page.items.length === 0) return;
      position = page.next;
    }
  }
}
