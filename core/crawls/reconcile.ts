/** How the reconciler (core/jobs/reconcile.ts) settles crawls: `crawl-<id>`, one slot, no end until the workflow's. */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import type { KindReconciler } from '../jobs/reconcile';
import { ActiveJobs } from '../jobs/active-jobs';
import { CrawlEnds } from './ends';
import { crawlJobChecker } from './jobs';
import { crawlWorkflowStart, type CrawlStartConfig } from './starts';
import { crawlCollections } from './store';
import { CRAWL_WORKFLOW_TYPE, crawlWorkflowId } from '../jobs/workflow-names';

export function crawlReconciler(deps: { db: Db; client: Client; config: CrawlStartConfig; slotLimit: (accountId: string, keyId: string) => Promise<number> }): KindReconciler {
  const { crawls } = crawlCollections(deps.db);
  const ends = new CrawlEnds(deps.db);
  const activeJobs = new ActiveJobs(deps.db, { crawl: crawlJobChecker(deps.db) });
  const waiting = async (crawlId: string): Promise<boolean> => {
    const doc = await crawls.findOne({ _id: crawlId }, { projection: { settled: 1 } });
    return doc !== null && !doc.settled && !(await ends.exists(crawlId));
  };
  return {
    kind: 'crawl',
    slotKind: 'crawl',
    surface: 'crawl',
    workflowId: crawlWorkflowId,
    // Nothing of a crawl that never started was shown to anyone (its start answered no id): it goes.
    async giveBack(start) {
      await crawls.deleteOne({ _id: start.record_id, published: 0 });
      await activeJobs.release(start.record_id);
    },
    async unfinished(before, limit) {
      const docs = await crawls.find({ settled: false, created_at: { $lt: before } }, { projection: { _id: 1 } }).limit(limit).toArray();
      const ended = new Set((await crawlCollections(deps.db).ends.find({ _id: { $in: docs.map((doc) => doc._id) } }, { projection: { _id: 1 } }).toArray()).map((doc) => doc._id));
      return docs.map((doc) => doc._id).filter((id) => !ended.has(id));
    },
    waiting,
    async restart(crawlId) {
      const doc = await crawls.findOne({ _id: crawlId });
      if (!doc) return;
      // It runs again in the slot it held (a full account lets it run anyway: it was accepted).
      await activeJobs.acquire(doc.account_id, await deps.slotLimit(doc.account_id, doc.key_id).catch(() => 1), { id: crawlId, kind: 'crawl' });
      try {
        await deps.client.workflow.start(CRAWL_WORKFLOW_TYPE, crawlWorkflowStart(doc, deps.config));
      } catch (error) {
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      }
    },
    async started(crawlId) {
      return (await crawls.findOne({ _id: crawlId }, { projection: { _id: 1 } })) !== null;
    },
  };
}
