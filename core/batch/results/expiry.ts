/**
 * How long a run's results are served: `RESULTS_RETENTION_DAYS` after the run ended. Past that a
 * successful task reads as `expired` (no `result_url`) and its body answers 410 `result_expired`,
 * from the moment the window closes, not from the retention sweep that removes it later.
 */
import type { RunDoc } from '../store';

const DAY_MS = 24 * 60 * 60 * 1000;

export function resultExpired(run: Pick<RunDoc, 'ended_at'>, retentionDays: number, now = Date.now()): boolean {
  return run.ended_at !== null && run.ended_at !== undefined && run.ended_at.getTime() + retentionDays * DAY_MS <= now;
}
