/**
 * The reconciler's composition: every kind of job the one start routine starts (crawls, Batch runs,
 * Extract preparations), settled by core/jobs/reconcile.ts. The API runs it once when it starts; the
 * `fetchplane-reconcile` Temporal Schedule (registered by the worker) runs it every
 * `RECONCILE_INTERVAL_MINUTES`.
 */
import type { Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import type { Accounts } from './accounts';
import { batchReconciler } from './batch/runs/reconcile';
import type { Config } from '../base/config';
import { crawlReconciler } from './crawls/reconcile';
import { prepareReconciler } from './extract/reconcile';
import { reconcileStarts, type KindReconciler, type ReconcileOptions, type ReconcileReport } from './jobs/reconcile';
import type { Logger } from '../base/log';

export const RECONCILE_SCHEDULE_ID = 'fetchplane-reconcile';
export { RECONCILE_WORKFLOW_TYPE as RECONCILE_WORKFLOW } from './jobs/workflow-names';

export interface ReconcileDeps {
  db: Db;
  client: Client;
  config: Config;
  accounts: Pick<Accounts, 'principalFor'>;
  log: Logger;
}

export function reconcilers(deps: ReconcileDeps): KindReconciler[] {
  const principalFor = (accountId: string, keyId: string) => deps.accounts.principalFor(accountId, keyId);
  return [
    crawlReconciler({ db: deps.db, client: deps.client, config: deps.config, slotLimit: async (accountId, keyId) => (await principalFor(accountId, keyId)).plan.activeJobs }),
    batchReconciler({ db: deps.db, client: deps.client, config: deps.config, principalFor }),
    prepareReconciler({ db: deps.db, client: deps.client, taskQueue: deps.config.temporalTaskQueue }),
  ];
}

/** One pass over every kind; what it did is logged when it did anything. */
export async function reconcile(deps: ReconcileDeps, options: ReconcileOptions = {}): Promise<ReconcileReport> {
  const report = await reconcileStarts({ db: deps.db, client: deps.client, log: deps.log }, reconcilers(deps), options);
  if (Object.values(report).some((count) => count > 0)) deps.log.info('reconciled starts', { ...report });
  return report;
}
