import { Context } from '@temporalio/activity';
import { reconcile } from '../core/reconcile';
import type { ReconcileReport } from '../core/jobs/reconcile';
import type { ActivityDeps } from './deps';

export function reconcileActivities(deps: ActivityDeps) {
  return {
    /** One reconciler pass (core/reconcile.ts), heartbeating as it goes so a killed worker's pass restarts. */
    async reconcileStarts(): Promise<ReconcileReport> {
      return reconcile({ db: deps.db, client: deps.temporal, config: deps.config, accounts: deps.accounts, log: deps.log }, { progress: () => Context.current().heartbeat() });
    },
  };
}
