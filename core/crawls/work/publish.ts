/**
 * The workflow's single writer of a crawl's documents. It appends a batch of commits (slices whose
 * kept URLs become readable results), sets the counters, and when the crawl's end is decided records
 * it with `recordEnd` (the stop call may have recorded one first: the first wins and is returned). The workflow never runs two publishes of a crawl at once,
 * so the crawl document has one writer (FerretDB updates are not atomic).
 */
import type { ActiveJobs } from '../../jobs/active-jobs';
import { recordEnd, type CrawlEnds } from '../ends';
import { insertIgnoringDuplicates } from '../../../base/db';
import { crawlCollections, ids, POST_STOP_WINDOW_MS, type CrawlDoc, type CrawlEndDoc } from '../store';
import type { CrawlEnd, Progress } from '../types';
import type { Db } from 'mongodb';
import type { CrawlRuntime } from './runtime';
import type { CrawlChanges } from '../../changes/crawls';
import { CrawlReader } from '../read';
import { START } from '../cursor';
import type { CrawlAnnouncer } from './webhooks';

export interface PublishInput {
  crawlId: string;
  progress: Progress;
  /** The end the workflow decided, to record if none is recorded yet. */
  end?: CrawlEnd;
}

export interface PublishResult {
  /** The recorded end (the stop call's when it came first). */
  end?: CrawlEnd & { finished_at: string };
  /** Kept URLs of commits dropped because they landed after the post-stop window. */
  droppedKept: number;
}

export interface PublishDeps {
  db: Db;
  ends: CrawlEnds;
  activeJobs: ActiveJobs;
  runtime: CrawlRuntime;
  /** Crawls with track_changes: their removed URLs and baseline, when they settle (core/changes/crawls.ts). */
  changes: CrawlChanges;
  /** The crawl's webhook events (absent: none are sent). */
  announcer?: CrawlAnnouncer;
}

export async function publishCrawl(deps: PublishDeps, input: PublishInput): Promise<PublishResult> {
  const { crawlId, progress } = input;
  const collections = crawlCollections(deps.db);
  let end: CrawlEndDoc | null = null;
  if (input.end) end = await recordEnd(deps, crawlId, input.end);

  let commits = progress.commits;
  let droppedKept = 0;
  if (commits.length > 0) {
    end ??= await deps.ends.read(crawlId);
    if (end?.status === 'stopped' && Date.now() > end.finished_at.getTime() + POST_STOP_WINDOW_MS) {
      droppedKept = commits.reduce((sum, commit) => sum + commit.kept, 0);
      commits = [];
    }
    await insertIgnoringDuplicates(collections.commits, [{ _id: ids.commits(crawlId, progress.batch), crawl_id: crawlId, commits }]);
  }

  const set: Partial<CrawlDoc> = {
    coverage: { ...progress.coverage, items_found: progress.coverage.items_found - droppedKept },
    duplicates_removed: progress.duplicates_removed,
    settled: progress.settled,
  };
  if (progress.commits.length > 0) set.published = progress.batch + 1;
  const settledEnd = progress.settled ? (end ?? (await deps.ends.read(crawlId))) : null;
  // Read once as the crawl settles, for its change tracking and its webhook.
  const settledDoc = progress.settled ? await collections.crawls.findOne({ _id: crawlId }) : null;
  if (settledDoc) await settleChanges(deps, settledDoc, set.published, settledEnd);
  if (end) {
    set.status = end.status;
    set.finished_at = end.finished_at;
    if (end.stop_reason) set.stop_reason = end.stop_reason;
    if (end.error) set.error = end.error;
  }
  await collections.crawls.updateOne({ _id: crawlId }, { $set: set });
  // The end is told once nothing more can land, with the final counts (the crawl reads as it says).
  if (settledEnd && settledDoc?.webhook && deps.announcer) await deps.announcer.ended(settledDoc, settledEnd, set.coverage ?? settledDoc.coverage);
  if (progress.settled) deps.runtime.forget(crawlId);
  if (!end) return { droppedKept };
  return {
    droppedKept,
    end: {
      status: end.status,
      finished_at: end.finished_at.toISOString(),
      ...(end.stop_reason ? { stop_reason: end.stop_reason } : {}),
      ...(end.error ? { error: end.error } : {}),
    },
  };
}

/** A tracked crawl, as it settles: its removed URLs and, when it ran out of pages to open, the next crawl's baseline. */
async function settleChanges(deps: PublishDeps, doc: CrawlDoc, published: number | undefined, end: CrawlEnd | null): Promise<void> {
  if (!doc.track_changes) return;
  const crawlId = doc._id;
  const reader = new CrawlReader(deps.db);
  const view = await reader.view({ ...doc, published: published ?? doc.published });
  const exhausted = end?.status === 'completed' && end.stop_reason === undefined;
  await deps.changes.settle(
    { crawlId, accountId: doc.account_id, url: doc.url, ...(doc.change_tracking_tag !== undefined ? { tag: doc.change_tracking_tag } : {}), createdAt: doc.created_at },
    exhausted,
    async function* () {
      let position = START;
      for (;;) {
        const page = await reader.results(view, position, 1000);
        for (const item of page.items) if (item.changeStatus !== 'removed') yield item.url;
        if (page.exhausted || page.items.length === 0) return;
        position = page.next;
      }
    },
  );
}
