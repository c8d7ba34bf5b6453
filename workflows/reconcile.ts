/** `reconcileWorkflow`: one reconciler pass over cut-short starts, started by the `fetchplane-reconcile` Schedule. */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ReconcileReport } from '../core/jobs/reconcile';

const { reconcileStarts } = proxyActivities<Activities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '2 minutes', maximumAttempts: 3 },
});

export async function reconcileWorkflow(): Promise<ReconcileReport> {
  return reconcileStarts();
}
