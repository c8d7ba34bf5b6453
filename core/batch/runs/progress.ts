/**
 * A run's progress on its record, as its workflow publishes it (running, stats, slices started); a
 * pause is the control document's, not the status's. Nothing is written once the run has ended.
 */
import { confirmStart } from '../../jobs/start';
import type { RunStats } from '../run-types';
import type { BatchStore, RunDoc } from '../store';
import { TERMINAL_RUN } from './records';

export interface RunProgress {
  runId: string;
  stats: RunStats;
  nextSlice: number;
}

export async function writeRunProgress(store: BatchStore, priced: (run: RunDoc, stats: RunStats) => Promise<RunStats>, input: RunProgress): Promise<void> {
  const run = await store.runs.findOne({ _id: input.runId });
  if (!run || (TERMINAL_RUN as readonly string[]).includes(run.status)) return;
  // The run's workflow reports: its start (a scheduled fire's, whose workflow its fire started) went through.
  if (run.status === 'pending') await confirmStart(store.db, 'batch', run._id);
  const stats = await priced(run, input.stats);
  await store.runs.updateOne({ _id: input.runId, status: { $nin: [...TERMINAL_RUN] } }, { $set: { status: 'running', stats, next_slice: input.nextSlice, updated_at: new Date() } });
}
