/**
 * A crawl's start through the one start routine (core/jobs/start.ts): its workflow (`crawl-<id>`,
 * from the crawl document alone, so the reconciler can start it again) and what the start takes and
 * gives back (the active-job slot, the crawl document).
 */
import { WorkflowIdReusePolicy, type WorkflowStartOptions } from '@temporalio/client';
import type { Db } from 'mongodb';
import type { Config } from '../../base/config';
import { isDuplicateKey } from '../../base/db';
import { problem } from '../../base/errors';
import type { ActiveJobs } from '../jobs/active-jobs';
import type { StartPlan } from '../jobs/start';
import { CrawlEnds } from './ends';
import { crawlCollections, type CrawlDoc } from './store';
import type { CrawlSpec, CrawlTuning } from './types';
import { ACCOUNT_ATTRIBUTE, CRAWL_WORKFLOW_TYPE, crawlWorkflowId, STATUS_ATTRIBUTE } from '../jobs/workflow-names';

export type CrawlStartConfig = Pick<Config, 'temporalTaskQueue' | 'crawlSlicePages' | 'crawlSliceWindow' | 'crawlConcurrency' | 'crawlHistoryEvents'>;

/** The crawl workflow's start options, all from the stored crawl. */
export function crawlWorkflowStart(doc: CrawlDoc, config: CrawlStartConfig): WorkflowStartOptions {
  const spec: CrawlSpec = {
    crawlId: doc._id,
    accountId: doc.account_id,
    keyId: doc.key_id,
    url: doc.url,
    domain: doc.domain,
    ...(doc.depth !== undefined ? { depth: doc.depth } : {}),
    maxItems: doc.max_items,
    maxPages: doc.max_pages,
    include: doc.include_patterns,
    exclude: doc.exclude_patterns,
    ...(doc.webhook ? { webhook: doc.webhook, createdAt: doc.created_at.toISOString() } : {}),
    ...(doc.output_format ? { outputFormat: doc.output_format } : {}),
    ...(doc.respect_robots ? { respectRobots: true } : {}),
    ...(doc.track_changes ? { trackChanges: true, ...(doc.change_tracking_tag !== undefined ? { changeTag: doc.change_tracking_tag } : {}) } : {}),
    ...(doc.include_documents === false ? { includeDocuments: false } : {}),
  };
  const tuning: CrawlTuning = {
    slicePages: config.crawlSlicePages,
    window: config.crawlSliceWindow,
    concurrency: config.crawlConcurrency,
    historyLimit: config.crawlHistoryEvents,
  };
  return {
    taskQueue: config.temporalTaskQueue,
    workflowId: crawlWorkflowId(doc._id),
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    args: [{ spec, tuning }],
    typedSearchAttributes: [
      { key: ACCOUNT_ATTRIBUTE, value: doc.account_id },
      { key: STATUS_ATTRIBUTE, value: 'running' },
    ],
  };
}

/**
 * The start of crawl `doc`: a slot of the account's `limit` (none for a crawl that has ended: a
 * retry of a start that did go through), the crawl document (kept if a start cut short wrote it).
 */
export function crawlStartPlan(
  deps: { db: Db; activeJobs: ActiveJobs; config: CrawlStartConfig },
  doc: CrawlDoc,
  limit: number,
  claim?: { id: string | null; owned(): Promise<boolean> },
): StartPlan {
  const { crawls } = crawlCollections(deps.db);
  const ends = new CrawlEnds(deps.db);
  return {
    kind: 'crawl',
    recordId: doc._id,
    accountId: doc.account_id,
    claimId: claim?.id ?? null,
    workflowType: CRAWL_WORKFLOW_TYPE,
    workflow: crawlWorkflowStart(doc, deps.config),
    take: async () => {
      if (await ends.exists(doc._id)) return;
      const grant = await deps.activeJobs.acquire(doc.account_id, limit, { id: doc._id, kind: 'crawl' });
      if (!grant.ok) {
        throw problem('too_many_crawls', `The account already runs its ${limit} active jobs (Crawl and Batch together); retry when one ends.`, {
          headers: { 'Retry-After': '30' },
        });
      }
      try {
        await crawls.insertOne(doc);
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
      }
    },
    // A crawl whose workflow never started must not be readable as running.
    giveBack: async () => {
      await crawls.deleteOne({ _id: doc._id });
      await deps.activeJobs.release(doc._id);
    },
    ...(claim ? { owned: claim.owned } : {}),
  };
}
