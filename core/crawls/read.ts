/**
 * Reading a crawl from MongoDB (never from the workflow): the crawl document merged with its end
 * record, and its published results from any position, with `_id` look-ups only (batched as `_id: {$in}`
 * where a read needs several documents at once). Results are the
 * kept URLs of the published commits, in commit order; with `output_format` each one's content
 * status comes from the outcome block its position falls in.
 */
import type { ResultPosition } from './cursor';
import { CrawlEnds } from './ends';
import { readKeptPages, type KeptPage } from './kept-pages';
import { CrawlChanges } from '../changes/crawls';
import { changeMarks, crawlCollections, ids, outcomeMarks, POST_STOP_WINDOW_MS, type ContentStatus, type ResultChange, type CommitBatchDoc, type CrawlCollections, type CrawlDoc, type CrawlEndDoc, type FoundDoc } from './store';
import { FOUND_PART, OUTCOME_BLOCK, type CrawlEnd, type CrawlStatus } from './types';
import type { Db } from 'mongodb';

export interface CrawlView {
  doc: CrawlDoc;
  status: CrawlStatus;
  end?: CrawlEnd & { finished_at: Date };
  /** No result can land any more. */
  settled: boolean;
}

export type { ContentStatus, CrawlDoc, CrawlEndDoc };

export interface ResultItem {
  url: string;
  /** Position: the slice that found it and its index there (the content id is `<k>-<index>`). */
  k: number;
  index: number;
  contentStatus?: ContentStatus;
  /** Crawls with track_changes: the page against its URL's previous version, or `removed` (listed after the results). */
  changeStatus?: ResultChange | 'removed';
}

/** The id a kept page's content is served under (`/v1/crawls/{id}/contents/{content_id}`). */
export const contentIdOf = (item: Pick<ResultItem, 'k' | 'index'>): string => ids.contentId(item.k, item.index);

export class CrawlReader {
  readonly collections: CrawlCollections;
  private readonly ends: CrawlEnds;
  private readonly changes: CrawlChanges;

  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {
    this.collections = crawlCollections(db);
    this.ends = new CrawlEnds(db);
    this.changes = new CrawlChanges(db);
  }

  /** The crawl as its account sees it; null for a crawl of another account or none. */
  async load(crawlId: string, accountId: string): Promise<CrawlView | null> {
    const doc = await this.collections.crawls.findOne({ _id: crawlId });
    if (!doc || doc.account_id !== accountId) return null;
    return this.view(doc);
  }

  async view(doc: CrawlDoc): Promise<CrawlView> {
    let end: CrawlEndDoc | null = null;
    if (doc.status !== 'running' && doc.finished_at) {
      end = { _id: doc._id, status: doc.status, finished_at: doc.finished_at, ...(doc.stop_reason ? { stop_reason: doc.stop_reason } : {}), ...(doc.error ? { error: doc.error } : {}) };
    } else {
      end = await this.ends.read(doc._id);
    }
    if (!end) return { doc, status: 'running', settled: false };
    const windowOver = end.status === 'stopped' && this.now() > end.finished_at.getTime() + POST_STOP_WINDOW_MS;
    const { _id: _ignored, ...rest } = end;
    return { doc, status: end.status, end: rest, settled: doc.settled || windowOver };
  }

  /** Up to `limit` results from `from`; `next` is where the following read starts, `exhausted` whether nothing more is published. */
  async results(view: CrawlView, from: ResultPosition, limit: number): Promise<{ items: ResultItem[]; next: ResultPosition; exhausted: boolean }> {
    const pages = new PageCache(this.collections, view.doc._id);
    const items: ResultItem[] = [];
    let { batch, commit, offset } = from;
    while (items.length < limit && batch < view.doc.published) {
      const commits = (await pages.batch(batch))?.commits ?? [];
      await pages.prefetch(commits, commit, offset, limit - items.length);
      const current = commits[commit];
      if (!current) {
        batch++;
        commit = 0;
        offset = 0;
        continue;
      }
      if (offset >= current.kept) {
        commit++;
        offset = 0;
        continue;
      }
      const part = Math.floor(offset / FOUND_PART);
      const found = await pages.found(current.k, current.a, part);
      const end = Math.min(current.kept, (part + 1) * FOUND_PART, offset + (limit - items.length));
      for (let index = offset; index < end; index++) {
        const url = found?.urls[index - part * FOUND_PART];
        if (url === undefined) continue;
        items.push({ url, k: current.k, index });
      }
      offset = end;
    }
    // Crawls without output_format keep outcome blocks only for pages they skipped (robots.txt, documents), and when they track changes.
    if (view.doc.output_format || view.doc.respect_robots || view.doc.include_documents === false || view.doc.track_changes) await this.addContentStatus(view.doc._id, items);
    let exhausted = batch >= view.doc.published;
    // A settled tracked crawl's removed URLs follow its results, at positions {published, 0, index}.
    if (exhausted && view.settled && view.doc.track_changes && items.length < limit) {
      const removed = await this.changes.removed(view.doc._id, offset, limit - items.length);
      if (removed) {
        removed.urls.forEach((url, index) => items.push({ url, k: -1, index: offset + index, changeStatus: 'removed' }));
        offset += removed.urls.length;
        exhausted = offset >= removed.total;
      }
    }
    return { items, next: { batch, commit, offset }, exhausted };
  }

  private async addContentStatus(crawlId: string, items: ResultItem[]): Promise<void> {
    const blockOf = (item: ResultItem) => ids.outcome(crawlId, item.k, Math.floor(item.index / OUTCOME_BLOCK));
    const wanted = [...new Set(items.map(blockOf))];
    // One look-up for every outcome block the page of results touches.
    const found = wanted.length > 0 ? await this.collections.outcomes.find({ _id: { $in: wanted } }).toArray() : [];
    const blocks = new Map(found.map((doc) => [doc._id, doc]));
    for (const item of items) {
      const block = blocks.get(blockOf(item));
      item.contentStatus = outcomeMarks.decode(block?.s ?? '', item.index % OUTCOME_BLOCK);
      const change = changeMarks.decode(block?.c, item.index % OUTCOME_BLOCK);
      if (change) item.changeStatus = change;
    }
  }

  /** The HTML of one kept page; null when there is none. */
  async content(crawlId: string, contentId: string): Promise<KeptPage | null> {
    if (!/^\d{1,9}-\d{1,9}$/.test(contentId)) return null;
    return (await this.pages(crawlId, [contentId])).get(contentId) ?? null;
  }

  /** Kept pages by content id (absent ones left out). */
  pages(crawlId: string, contentIds: string[]): Promise<Map<string, KeptPage>> {
    return readKeptPages(this.db, crawlId, contentIds);
  }
}

/** Per-read cache of the batch and found documents a read walks through. */
class PageCache {
  private readonly batches = new Map<number, Promise<CommitBatchDoc | null>>();
  private readonly parts = new Map<string, Promise<FoundDoc | null>>();

  constructor(
    private readonly collections: CrawlCollections,
    private readonly crawlId: string,
  ) {}

  batch(batch: number): Promise<CommitBatchDoc | null> {
    let doc = this.batches.get(batch);
    if (!doc) {
      doc = this.collections.commits.findOne({ _id: ids.commits(this.crawlId, batch) });
      this.batches.set(batch, doc);
    }
    return doc;
  }

  /**
   * Loads, in one look-up, the found parts the next `wanted` results of a batch fall in (from commit
   * `commit`, offset `offset`), instead of one look-up per part as the walk reaches it.
   */
  async prefetch(commits: ReadonlyArray<{ k: number; a: number; kept: number }>, commit: number, offset: number, wanted: number): Promise<void> {
    const needed: string[] = [];
    let left = wanted;
    for (let index = commit; index < commits.length && left > 0; index++) {
      const current = commits[index]!;
      const start = index === commit ? offset : 0;
      const end = Math.min(current.kept, start + left);
      for (let part = Math.floor(start / FOUND_PART); part * FOUND_PART < end; part++) {
        const id = ids.found(this.crawlId, current.k, current.a, part);
        if (!this.parts.has(id)) needed.push(id);
      }
      left -= Math.max(0, end - start);
    }
    if (needed.length < 2) return;
    const loaded = this.collections.found.find({ _id: { $in: needed } }).toArray();
    for (const id of needed) this.parts.set(id, loaded.then((docs) => docs.find((doc) => doc._id === id) ?? null));
    await loaded;
  }

  found(k: number, a: number, part: number): Promise<FoundDoc | null> {
    const id = ids.found(this.crawlId, k, a, part);
    let doc = this.parts.get(id);
    if (!doc) {
      doc = this.collections.found.findOne({ _id: id });
      this.parts.set(id, doc);
    }
    return doc;
  }
}
