/** `retentionWorkflow`: one sweep of expired data, started by the `fetchplane-retention` Schedule. */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { SweepReport } from '../core/retention';

const { retentionSweep } = proxyActivities<Activities>({
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 5 },
});

export async function retentionWorkflow(): Promise<SweepReport> {
  return retentionSweep();
}
