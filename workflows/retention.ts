/** `retentionWorkflow`: one sweep of expired data, started by the `fetchplane-retention` Schedule, on the light task queue. */
import type { SweepReport } from '../core/retention';
import { lightActivities } from './light-queue';
import { sweepRetry } from '../core/jobs/retry-rules';

export async function retentionWorkflow(): Promise<SweepReport> {
  const { retentionSweep } = lightActivities({ startToCloseTimeout: '2 hours', heartbeatTimeout: '1 minute', retry: sweepRetry('5 minutes', 5) });
  return retentionSweep();
}
