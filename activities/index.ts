import { batchActivities } from './batch';
import { crawlActivities, createCrawlRuntime } from './crawl';
import type { ActivityDeps } from './deps';
import { extractActivities } from './extract';
import { reconcileActivities } from './reconcile';
import { retentionActivities } from './retention';
import { selfCheckActivities } from './selfcheck';
import { webhookActivities } from './webhooks';

export type { ActivityDeps } from './deps';

/** Builds every activity with its dependencies injected; the worker registers the result. */
export function createActivities(deps: ActivityDeps) {
  // Crawls and Extract's discovery share the worker's crawl machinery (the host gate is the installation's).
  const crawlRuntime = createCrawlRuntime(deps);
  return {
    ...selfCheckActivities(deps),
    ...retentionActivities(deps),
    ...reconcileActivities(deps),
    ...crawlActivities(deps, crawlRuntime),
    ...extractActivities(deps, crawlRuntime),
    ...webhookActivities(deps),
    ...batchActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
