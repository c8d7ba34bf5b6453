/**
 * What a run asks of its slices before each task: go on, hold (paused) or stop (stopped, deleted or
 * ended). The control document is read for every task (lanes that ask while a read is under way share
 * it), so no task starts after a stop was answered; the run's record, which ends only by the run
 * itself, is trusted for CONTROL_CHECK_MS. One reader per worker process, shared by its slices.
 */
import type { BatchStore, RunControlDoc } from '../store';
import { isTerminal } from './records';

export type RunControl = 'go' | 'pause' | 'stop';

/** How long a run's record (whether it has ended) is trusted before it is read again. */
const CONTROL_CHECK_MS = 1_000;
/** Runs whose end is remembered at once; the oldest is forgotten past this. */
const REMEMBERED = 1_000;

export class RunControls {
  private readonly ended = new Map<string, { at: number; ended: boolean }>();
  private readonly reading = new Map<string, Promise<RunControlDoc | null>>();

  constructor(private readonly store: BatchStore) {}

  async of(runId: string): Promise<RunControl> {
    const cached = this.ended.get(runId);
    const [run, asked] = await Promise.all([
      cached && Date.now() - cached.at < CONTROL_CHECK_MS
        ? cached
        : this.store.runs.findOne({ _id: runId }, { projection: { status: 1 } }).then((doc) => ({ at: Date.now(), ended: !doc || isTerminal(doc.status) })),
      this.controlOf(runId),
    ]);
    this.ended.set(runId, run);
    if (this.ended.size > REMEMBERED) this.ended.delete(this.ended.keys().next().value as string);
    return run.ended || asked?.stop ? 'stop' : asked?.pause_state === 'paused' ? 'pause' : 'go';
  }

  private controlOf(runId: string): Promise<RunControlDoc | null> {
    let read = this.reading.get(runId);
    if (!read) {
      read = this.store.controls.findOne({ _id: runId }).finally(() => this.reading.delete(runId));
      this.reading.set(runId, read);
    }
    return read;
  }
}
