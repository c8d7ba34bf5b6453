import type { ReconcileReport } from '../core/jobs/reconcile';
import type { ActivityDeps } from './deps';
import { workContext } from './failures';

export function reconcileActivities(deps: ActivityDeps) {
  return {
    /** One reconciler pass (core/reconcile.ts), heartbeating as it goes so a killed worker's pass restarts. */
    async reconcileStarts(): Promise<ReconcileReport> {
      const work = workContext();
      return deps.reconcile(() => work.heartbeat());
    },
  };
}
