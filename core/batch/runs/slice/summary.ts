/** What a slice reports to its run's workflow: its counts, the reasons of its failed tasks, its credits. */
import type { SliceSummary } from '../../run-types';
import type { TaskResult } from '../../store';

/** Reasons counted in `stats.failure_reasons`, from the problem codes of failed tasks. */
const REASONS: Record<string, string> = {
  RESP001: 'blocked',
  RESP002: 'not_found',
  REQS001: 'forbidden_target',
  REQS002: 'blocked',
  REQS004: 'invalid_param_value',
  RESP005: 'too_large',
  RESP007: 'dns_error',
  payment_required: 'insufficient_credits',
};
export const reasonOf = (code: string): string => REASONS[code] ?? code.toLowerCase();

export function summarize(n: number, items: TaskResult[], credits: number, refused?: string): SliceSummary {
  const failureReasons: Record<string, number> = {};
  let successful = 0;
  let failed = 0;
  let pending = 0;
  for (const item of items) {
    if (item.status === 'successful') successful++;
    else if (item.status === 'failed') {
      failed++;
      const reason = reasonOf(item.error?.code ?? 'internal');
      failureReasons[reason] = (failureReasons[reason] ?? 0) + 1;
    } else pending++;
  }
  return { n, tasks: items.length, successful, failed, pending, failureReasons, credits, ...(refused !== undefined ? { refused } : {}) };
}
