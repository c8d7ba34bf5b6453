/**
 * Crawls with `track_changes`: each fetched result is recorded in its URL's history (the same history
 * a Fetch with `track_changes` adds to), and at the crawl's end the URLs of the previous tracked crawl
 * of the same start URL (and tag) that this one did not find are listed as removed.
 *
 * Only a crawl that ran out of pages to open (completed without a stop reason) can tell a URL gone
 * from one not reached: it lists removed URLs and becomes the baseline of the next. A crawl stopped by
 * a limit, by its caller or by a failure lists none and leaves the baseline as it was.
 *
 *   crawl_removed   `<crawl>|s` {total, baseline} then `<crawl>|r|<part>` {urls: [...500]}
 *                   (crawl data: removed with the crawl, core/retention.ts)
 *   change_crawls   `<account>|<sha256(start key\ntag)[0..32]>` the baseline: crawl id and its URL set,
 *                   a blob of owner `change_crawl` (`<record>|<crawl id>`)
 */
import type { Collection, Db } from 'mongodb';
import { insertIgnoringDuplicates } from '../../base/db';
import type { ChangeStatus, HtmlOutputs } from '../../engine';
import { urlKey } from '../crawls/urls';
import { Blobs } from '../jobs/blobs';
import { pack, unpack, type Observation } from './content';
import { ChangeRecorder } from './record';
import { changeCollections, changeIds, keyHash, type ChangeCollections } from './store';

export const REMOVED_PART = 500;

interface RemovedDoc {
  _id: string;
  crawl_id: string;
  /** The summary: how many URLs are removed, and the crawl they were in. */
  total?: number;
  baseline?: string | null;
  /** A part: removed URLs in order. */
  urls?: string[];
}

export interface TrackedCrawl {
  crawlId: string;
  accountId: string;
  /** The start URL. */
  url: string;
  tag?: string;
  createdAt: Date;
}

const summaryId = (crawlId: string): string => `${crawlId}|s`;
const partId = (crawlId: string, part: number): string => `${crawlId}|r|${part}`;

export class CrawlChanges {
  private readonly removedDocs: Collection<RemovedDoc>;
  private readonly collections: ChangeCollections;
  private readonly blobs: Blobs;
  private readonly recorder: ChangeRecorder | undefined;

  /** `outputs`: where pages are converted to be compared; a reader of crawls (no `outputs`) records nothing. */
  constructor(db: Db, outputs?: HtmlOutputs) {
    this.removedDocs = db.collection<RemovedDoc>('crawl_removed');
    this.collections = changeCollections(db);
    this.blobs = new Blobs(db);
    this.recorder = outputs ? new ChangeRecorder(db, outputs) : undefined;
  }

  /** A fetched result of a tracked crawl, recorded in its URL's history; a retried slice finds what its first attempt stored. */
  async recordPage(crawl: Pick<TrackedCrawl, 'crawlId' | 'accountId' | 'tag'>, url: string, contentId: string, page: Observation): Promise<ChangeStatus> {
    if (!this.recorder) throw new Error('CrawlChanges records pages only when built with the HTML outputs');
    const recorded = await this.recorder.record({ accountId: crawl.accountId, url, ...(crawl.tag !== undefined ? { tag: crawl.tag } : {}) }, page, { origin: `${crawl.crawlId}|${contentId}` });
    return recorded.status;
  }

  /**
   * At a tracked crawl's end, once (a retried call finds its summary and only makes sure of the
   * baseline): the removed URLs, then this crawl as the baseline when it ran out of pages to open.
   */
  async settle(crawl: TrackedCrawl, exhausted: boolean, results: () => AsyncIterable<string>): Promise<void> {
    const startKey = urlKey(crawl.url) ?? crawl.url;
    const tag = crawl.tag ?? '';
    const recordId = changeIds.track(crawl.accountId, keyHash(startKey, tag));
    const done = await this.removedDocs.findOne({ _id: summaryId(crawl.crawlId) });
    if (done && !exhausted) return;
    const urls: string[] = [];
    for await (const url of results()) urls.push(url);
    if (!done) {
      const baseline = exhausted ? await this.collections.crawls.findOne({ _id: recordId }) : null;
      const removed: string[] = [];
      if (baseline && baseline.crawl_id !== crawl.crawlId) {
        const packed = await this.blobs.read(baseline.blob);
        const previous = packed ? (await unpack(packed)).toString('utf8').split('\n').filter((line) => line !== '') : [];
        const found = new Set(urls.map((url) => urlKey(url) ?? url));
        for (const url of previous) if (!found.has(urlKey(url) ?? url)) removed.push(url);
      }
      const parts: RemovedDoc[] = [];
      for (let part = 0; part * REMOVED_PART < removed.length; part++) {
        parts.push({ _id: partId(crawl.crawlId, part), crawl_id: crawl.crawlId, urls: removed.slice(part * REMOVED_PART, (part + 1) * REMOVED_PART) });
      }
      await insertIgnoringDuplicates(this.removedDocs, parts);
      // The summary last: a reader that finds it finds every part.
      await insertIgnoringDuplicates(this.removedDocs, [{ _id: summaryId(crawl.crawlId), crawl_id: crawl.crawlId, total: removed.length, baseline: baseline?.crawl_id ?? null }]);
    }
    if (!exhausted) return;
    const existing = await this.collections.crawls.findOne({ _id: recordId }, { projection: { crawl_id: 1, at: 1 } });
    // A crawl that started before the baseline's does not replace it.
    if (existing && existing.crawl_id !== crawl.crawlId && existing.at.getTime() > crawl.createdAt.getTime()) return;
    const blob = changeIds.crawlSet(recordId, crawl.crawlId);
    await this.blobs.put({ kind: 'change_crawl', id: changeIds.crawlOwner(recordId, crawl.crawlId) }, blob, await pack(Buffer.from(urls.join('\n'), 'utf8')));
    await this.collections.crawls.replaceOne(
      { _id: recordId },
      { account: crawl.accountId, key: startKey, url: crawl.url, tag, crawl_id: crawl.crawlId, blob, urls: urls.length, at: crawl.createdAt },
      { upsert: true },
    );
  }

  /** A settled tracked crawl's removed URLs from position `from`, up to `limit`, and how many there are (undefined: none computed). */
  async removed(crawlId: string, from: number, limit: number): Promise<{ urls: string[]; total: number } | undefined> {
    const summary = await this.removedDocs.findOne({ _id: summaryId(crawlId) });
    if (!summary || summary.total === undefined) return undefined;
    const end = Math.min(summary.total, from + limit);
    if (from >= end) return { urls: [], total: summary.total };
    const parts = Array.from({ length: Math.floor((end - 1) / REMOVED_PART) - Math.floor(from / REMOVED_PART) + 1 }, (_, k) => Math.floor(from / REMOVED_PART) + k);
    const docs = new Map((await this.removedDocs.find({ _id: { $in: parts.map((part) => partId(crawlId, part)) } }).toArray()).map((doc) => [doc._id, doc.urls ?? []]));
    const urls: string[] = [];
    for (let index = from; index < end; index++) {
      const url = docs.get(partId(crawlId, Math.floor(index / REMOVED_PART)))?.[index % REMOVED_PART];
      if (url !== undefined) urls.push(url);
    }
    return { urls, total: summary.total };
  }
}
