import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { PROBE_RETRY } from '../core/jobs/retry-rules';

const { recordSelfCheck } = proxyActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: PROBE_RETRY,
});

/** Runs one activity that writes to MongoDB; the API reads the record back (see core/selfcheck.ts). */
export async function selfCheckWorkflow(input: { token: string }): Promise<{ worker: string }> {
  return recordSelfCheck(input.token);
}
