/** `reconcileWorkflow`: one reconciler pass over cut-short starts, started by the `fetchplane-reconcile` Schedule, on the light task queue. */
import type { ReconcileReport } from '../core/jobs/reconcile';
import { lightActivities } from './light-queue';
import { sweepRetry } from '../core/jobs/retry-rules';

export async function reconcileWorkflow(): Promise<ReconcileReport> {
  const { reconcileStarts } = lightActivities({ startToCloseTimeout: '30 minutes', heartbeatTimeout: '1 minute', retry: sweepRetry('2 minutes', 3) });
  return reconcileStarts();
}
