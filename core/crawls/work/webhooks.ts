/**
 * A crawl's webhook events from the worker (our extension; core/webhooks/crawl-events.ts): the start
 * slice writes `crawl.started`, a slice that stored its outcomes writes `crawl.page.failed` for each
 * page that failed (when asked), and the step that settles the crawl (its last publish, or the
 * workflow's failure) writes `crawl.started` if no slice did, then its end event with the final counts. Each event is written once under a key of its moment and its delivery started as the
 * workflow `webhook-<event_id>` (a second start finds the first): a retried step sends nothing twice.
 */
import type { Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import { startDelivery, type WebhookRetry } from '../../webhooks/deliveries';
import { endEvent, recordCrawlEvent, wants, type CrawlMoment, type FailedPage } from '../../webhooks/crawl-events';
import { crawlCollections, type CrawlDoc, type CrawlEndDoc } from '../store';
import type { Coverage, CrawlSpec } from '../types';

export interface CrawlAnnouncer {
  /** The crawl's first slice began. */
  started(spec: CrawlSpec): Promise<void>;
  /** Pages of a slice that failed, once its outcomes are stored. */
  pagesFailed(spec: CrawlSpec, pages: FailedPage[]): Promise<void>;
  /** The crawl settled (nothing more can land): its end with the final counts. */
  ended(doc: CrawlDoc, end: CrawlEndDoc, coverage: Coverage): Promise<void>;
}

const ZERO: Coverage = { pages_fetched: 0, pages_failed: 0, items_found: 0 };

export function crawlAnnouncer(deps: { db: Db; client: Client; taskQueue: string; retry: WebhookRetry }): CrawlAnnouncer {
  const announce = async (moment: CrawlMoment, at?: Date): Promise<void> => {
    const event = await recordCrawlEvent(deps.db, moment, at);
    // Told already (a retried step, or the end's check that the start was told): nothing to start again.
    if (event.state !== 'pending') return;
    await startDelivery(deps.client, deps.taskQueue, { key: event._id, eventId: event.event_id }, deps.retry);
  };
  const fromSpec = (spec: CrawlSpec): Pick<CrawlMoment, 'crawlId' | 'accountId' | 'url' | 'createdAt'> => ({
    crawlId: spec.crawlId,
    accountId: spec.accountId,
    url: spec.url,
    createdAt: spec.createdAt ?? new Date(0).toISOString(),
  });

  return {
    async started(spec) {
      if (!wants(spec.webhook, 'started')) return;
      await announce({ ...fromSpec(spec), webhook: spec.webhook, event: 'started', status: 'running', coverage: ZERO });
    },

    async pagesFailed(spec, pages) {
      if (pages.length === 0 || !wants(spec.webhook, 'page.failed')) return;
      // The counts as last published: a slice sees only its own pages.
      const doc = await crawlCollections(deps.db).crawls.findOne({ _id: spec.crawlId }, { projection: { coverage: 1, status: 1 } });
      for (const page of pages) {
        await announce({ ...fromSpec(spec), webhook: spec.webhook, event: 'page.failed', status: doc?.status ?? 'running', coverage: doc?.coverage ?? ZERO, page });
      }
    },

    async ended(doc, end, coverage) {
      const crawl = { crawlId: doc._id, accountId: doc.account_id, url: doc.url, createdAt: doc.created_at.toISOString() };
      // The start is told before the end, always: a crawl that ended before its first slice (stopped at
      // once, or its workflow gone) is told it started now, dated at its creation (a no-op when told).
      if (wants(doc.webhook, 'started')) await announce({ ...crawl, webhook: doc.webhook, event: 'started', status: 'running', coverage: ZERO }, doc.created_at);
      const event = endEvent(end.status);
      if (!wants(doc.webhook, event)) return;
      await announce({
        ...crawl,
        webhook: doc.webhook,
        event,
        status: end.status,
        coverage,
        finishedAt: end.finished_at.toISOString(),
        ...(end.stop_reason ? { stopReason: end.stop_reason } : {}),
        ...(end.error ? { error: end.error } : {}),
      });
    },
  };
}
