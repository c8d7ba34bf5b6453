import { batchActivities } from './batch';
import { crawlActivities } from './crawl';
import type { ActivityDeps } from './deps';
import { extractActivities } from './extract';
import { monitorActivities } from './monitors';
import { reconcileActivities } from './reconcile';
import { retentionActivities } from './retention';
import { selfCheckActivities } from './selfcheck';
import { webhookActivities } from './webhooks';

export type { ActivityDeps } from './deps';

/** Builds every activity with its dependencies injected; the worker registers the result. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...selfCheckActivities(deps),
    ...retentionActivities(deps),
    ...reconcileActivities(deps),
    ...crawlActivities(deps.crawl),
    ...extractActivities(deps.preparation),
    ...webhookActivities(deps.webhooks),
    ...batchActivities(deps),
    ...monitorActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
