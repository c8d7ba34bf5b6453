/**
 * A Batch run, `run-<run_id>`: works through the job's slices in order, a few at once, each slice one
 * activity that fetches its tasks under the run's concurrency and writes their results and bill once.
 * The workflow keeps the run's stats from the slices' summaries (exact: a retried slice returns the
 * summary of what it stored) and publishes them as slices end (at least every 1% of the tasks).
 *
 *   start ─> slices (BATCH_SLICES_IN_FLIGHT at once) ─> summary ─> stats ─> publish ─> … ─> end ─> webhook event
 *
 * Signals: tasks added (an open job grows; `last_batch` closes it), pause, resume, stop. A stop and a
 * pause are also written on the run by the API, and slices look at them before each task, so both take
 * effect within the tasks in flight. A paused slice stores its results so far and returns `paused`
 * (nothing waits in an activity); the run keeps it in `pausedSlices` and, once resumed, schedules its
 * next part, which starts from them. A run that halts (stopped, refused, failed) with paused slices
 * schedules their next parts as `closing`, which store them as they stand, so every finished task is
 * counted. A slice that finds the account unable to pay ends the run as failed
 * (`insufficient_credits`), keeping what was fetched. Continue-as-new between slices keeps the
 * history bounded for 100,000-task runs (workflows/continue-as-new.ts). The run's end record goes to
 * the light task queue, and its webhook delivery is a child started by reference (workflows/webhook-start.ts).
 */
import {
  condition,
  continueAsNew,
  deprecatePatch,
  executeChild,
  defineSignal,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { emptyStats, type RunInput, type RunState, type RunStats, type SliceSummary } from '../core/batch/run-types';
import {
  ACCOUNT_ATTRIBUTE,
  batchRunWorkflowId,
  JOB_ATTRIBUTE,
  PAUSE_SIGNAL,
  RESUME_SIGNAL,
  STATUS_ATTRIBUTE,
  STOP_SIGNAL,
  TASKS_ADDED_SIGNAL,
  type StopKind,
  type TasksAdded,
} from '../core/jobs/workflow-names';
import { shouldContinueAsNew } from './continue-as-new';
import { lightActivities } from './light-queue';
import { RECORD_RETRY, stepRetry, WORK_RETRY } from '../core/jobs/retry-rules';
import { startWebhookDelivery } from './webhook-start';

const SLICE_OPTIONS = {
  // A slice is 250 tasks: at the lowest concurrency and slow targets that is well under an hour. An
  // attempt that takes longer is retried from its progress (heartbeats), losing only tasks in flight.
  startToCloseTimeout: '1 hour',
  // A killed worker's slice is retried elsewhere within this.
  heartbeatTimeout: '15 seconds',
  retry: WORK_RETRY,
  // Through the task queue, never handed back with the workflow task: an eagerly dispatched slice goes
  // to the worker that ran the (sticky) workflow, so one run's slices would all stay on one worker.
  allowEagerDispatch: false,
} as const;
const { batchSlice } = proxyActivities<Activities>(SLICE_OPTIONS);

// Progress is a local activity: one marker in the history instead of a scheduled activity and its own
// workflow task, for a write that happens after most slices.
const { batchRunProgress } = proxyLocalActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: RECORD_RETRY });

export const tasksAddedSignal = defineSignal<[TasksAdded]>(TASKS_ADDED_SIGNAL);
export const pauseSignal = defineSignal(PAUSE_SIGNAL);
export const resumeSignal = defineSignal(RESUME_SIGNAL);
export const stopSignal = defineSignal<[StopKind]>(STOP_SIGNAL);

/**
 * Slices in flight at once when the run's input does not say (runs started before it did), so the
 * run's window stays full across a slice's tail (each worker holds the run to its concurrency).
 */
const LANES = 3;
/** History events after which a run continues as new when its input does not say (runs started before it did). */
const HISTORY_LIMIT = 4_000;
const DRAIN_PATCH = 'batch-drain-before-continue-as-new';
/**
 * Every run's slices return on a pause; the marker of the patch that made them so is still written
 * where it was (before the first slice), so the histories recorded with it replay.
 */
const PAUSE_PATCH = 'batch-slice-returns-on-pause';
/**
 * A slice that paused while the run has no pause recorded (its signal is still on its way, or a
 * resume overtook it): its next part waits this long, then asks the run's control again.
 */
const PAUSE_RECHECK = '5 seconds';

export function addSummary(stats: RunStats, summary: SliceSummary, total: number): RunStats {
  const reasons = { ...stats.failure_reasons };
  for (const [reason, count] of Object.entries(summary.failureReasons)) reasons[reason] = (reasons[reason] ?? 0) + count;
  const credits = stats.spend.credits + summary.credits;
  return {
    total,
    completed: stats.completed + summary.successful + summary.failed,
    successful: stats.successful + summary.successful,
    failed: stats.failed + summary.failed,
    failure_reasons: reasons,
    spend: { credits, cost: 0 },
  };
}

export async function batchRunWorkflow(input: RunInput): Promise<RunState> {
  const state: RunState = input.state ?? {
    nextSlice: 0,
    sliceCount: input.sliceCount,
    total: input.total,
    lastBatch: input.lastBatch,
    stats: emptyStats(input.total),
    paused: false,
  };
  let wake = 0;
  /** Paused slices wait for PAUSE_RECHECK before their next part (see PAUSE_RECHECK). */
  let recheck = false;
  setHandler(tasksAddedSignal, (added) => {
    state.sliceCount = Math.max(state.sliceCount, added.sliceCount);
    state.total = Math.max(state.total, added.total);
    state.lastBatch ||= added.lastBatch;
    wake++;
  });
  setHandler(pauseSignal, () => {
    state.paused = true;
    wake++;
  });
  setHandler(resumeSignal, () => {
    state.paused = false;
    recheck = false;
    wake++;
  });
  setHandler(stopSignal, (kind) => {
    state.stop ??= kind;
    wake++;
  });

  // As many slices in flight as workers should share the run (each takes slices from the task queue).
  const lanes = input.slicesInFlight ?? LANES;
  const historyLimit = input.historyLimit ?? HISTORY_LIMIT;
  const inFlight = new Set<number>();
  const finished: SliceSummary[] = [];
  const failures: string[] = [];
  const statusOf = (): 'running' | 'paused' => (state.paused ? 'paused' : 'running');
  let published = { status: '', total: -1, completed: -1, nextSlice: -1 };

  /** Schedules part `part` of slice `n`; a paused slice comes back to `pausedSlices` for its next part. */
  const startSlice = (n: number, part: number, closing: boolean): void => {
    inFlight.add(n);
    deprecatePatch(PAUSE_PATCH);
    batchSlice({
      runId: input.runId,
      jobId: input.jobId,
      accountId: input.accountId,
      keyId: input.keyId,
      n,
      concurrency: input.concurrency,
      ...(input.rerun ? { rerun: input.rerun } : {}),
      pausable: true,
      ...(part > 0 ? { part } : {}),
      ...(closing ? { closing: true } : {}),
    }).then(
      (summary) => {
        inFlight.delete(n);
        if (summary.paused) {
          (state.pausedSlices ??= []).push({ n, part: part + 1 });
          if (!state.paused && !recheck) {
            recheck = true;
            void sleep(PAUSE_RECHECK).then(() => {
              recheck = false;
              wake++;
            });
          }
        } else finished.push(summary);
        wake++;
      },
      (error: unknown) => {
        inFlight.delete(n);
        failures.push(error instanceof Error ? error.message : String(error));
        wake++;
      },
    );
  };

  /**
   * Writes the run's progress to its record (what GET /v1/jobs reads) and to the Web UI's memo. Between
   * two writes at least 1% of the run's tasks complete, unless its status or size changed or nothing is
   * in flight (the run waits for tasks or a resume): a 100,000-task run writes about 100 times.
   */
  const publish = async (): Promise<void> => {
    const status = statusOf();
    const { completed } = state.stats;
    const step = Math.max(1, Math.floor(state.total / 100));
    const changed = status !== published.status || state.total !== published.total;
    const unchanged = !changed && completed === published.completed && state.nextSlice === published.nextSlice;
    if (unchanged || (!changed && inFlight.size > 0 && completed - published.completed < step)) return;
    if (status !== published.status) upsertSearchAttributes([{ key: STATUS_ATTRIBUTE, value: status }]);
    published = { status, total: state.total, completed, nextSlice: state.nextSlice };
    await batchRunProgress({ runId: input.runId, stats: { ...state.stats, total: state.total }, nextSlice: state.nextSlice });
    upsertMemo({ progress: { completed, total: state.total } });
  };

  for (;;) {
    // Summaries are applied first, and again after every await: a slice that ends while progress is
    // being written must count before the run can end or continue as new.
    for (const summary of finished.splice(0)) {
      state.stats = addSummary(state.stats, summary, state.total);
      if (summary.refused !== undefined) state.refused ??= summary.refused;
    }
    await publish();
    if (finished.length > 0) continue;
    const halted = state.stop !== undefined || state.refused !== undefined;
    // As a crawl does: past the history bound, no new slice starts; once those in flight have ended,
    // the run continues as new (runs recorded before this rule went on scheduling: the patch marker).
    const draining = shouldContinueAsNew(historyLimit) && patched(DRAIN_PATCH);
    // A run that is ending closes its paused slices (stored as they stand, at once), whatever else holds.
    const closing = halted || failures.length > 0;
    const parked = state.pausedSlices ?? [];
    while (parked.length > 0 && inFlight.size < lanes && (closing || (!draining && !state.paused && !recheck))) {
      const { n, part } = parked.shift() as { n: number; part: number };
      startSlice(n, part, closing);
    }
    while (!halted && !draining && !state.paused && inFlight.size < lanes && state.nextSlice < state.sliceCount) {
      startSlice(state.nextSlice++, 0, false);
    }
    if (inFlight.size === 0 && parked.length === 0) {
      if (halted || failures.length > 0) break;
      if (state.lastBatch && state.nextSlice >= state.sliceCount) break;
    }
    if (inFlight.size === 0 && shouldContinueAsNew(historyLimit)) {
      await continueAsNew<typeof batchRunWorkflow>({ ...input, state });
    }
    const seen = wake;
    await condition(() => wake !== seen);
  }

  const stats = { ...state.stats, total: state.total };
  // Completed means every task has an outcome; slices store only finished attempts, so a shortfall
  // here is a defect to report, never a run to call done.
  const unfinished = stats.total - stats.completed;
  const end =
    state.stop !== undefined
      ? { status: state.stop }
      : state.refused !== undefined
        ? { status: 'failed' as const, failure: { reason: 'insufficient_credits', detail: state.refused } }
        : failures.length > 0
          ? { status: 'failed' as const, failure: { reason: 'internal', detail: failures[0] ?? 'A slice failed.' } }
          : unfinished > 0
            ? { status: 'failed' as const, failure: { reason: 'incomplete', detail: `${unfinished} of ${stats.total} tasks have no outcome.` } }
            : { status: 'completed' as const };
  // Unlimited attempts: a run's record must be written even after a long database outage.
  const { batchRunEnd } = lightActivities({ startToCloseTimeout: '30 seconds', retry: RECORD_RETRY });
  const recorded = await batchRunEnd({ runId: input.runId, stats, ...end });
  upsertSearchAttributes([{ key: STATUS_ATTRIBUTE, value: end.status }]);
  // The delivery outlives the run: it may retry for hours.
  if (recorded.webhook) await startWebhookDelivery(recorded.webhook, input.webhookRetry);
  return state;
}

const { batchScheduledFire } = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry: WORK_RETRY });

/**
 * One fire of a scheduled job's Temporal Schedule: a run of its tasks as a child workflow, waited for,
 * so the Schedule's overlap policy skips a fire while the last one's run still runs. A fire the
 * account cannot run is recorded as a failed run, and its webhook is delivered.
 */
export async function batchScheduledFireWorkflow(input: { jobId: string }): Promise<void> {
  const fired = await batchScheduledFire({ jobId: input.jobId, fireId: workflowInfo().workflowId });
  if (fired.kind === 'run') {
    // The reconciler may have started this run already (a fire that stalled between its activity and
    // here): the run is then running on its own, which is all this fire had to bring about.
    const alreadyStarted = (error: unknown): boolean => error instanceof Error && error.name === 'WorkflowExecutionAlreadyStartedError';
    await executeChild(batchRunWorkflow, {
      workflowId: batchRunWorkflowId(fired.input.runId),
      args: [fired.input],
      typedSearchAttributes: [
        { key: ACCOUNT_ATTRIBUTE, value: fired.accountId },
        { key: JOB_ATTRIBUTE, value: fired.jobId },
        { key: STATUS_ATTRIBUTE, value: 'pending' },
      ],
      memo: { progress: { completed: 0, total: fired.input.total } },
    }).catch((error: unknown) => {
      if (!alreadyStarted(error)) throw error;
    });
  } else if (fired.kind === 'ended' && fired.webhook) {
    await startWebhookDelivery(fired.webhook, fired.webhookRetry);
  }
}

const { batchExport } = proxyActivities<Activities>({
  startToCloseTimeout: '30 minutes',
  // A chunk is written (and heartbeats) every few MB: a killed worker's export is retried within this.
  heartbeatTimeout: '1 minute',
  retry: stepRetry(5),
});

/** `export-<export_id>`: writes one export's file. */
export async function batchExportWorkflow(exportId: string): Promise<void> {
  await batchExport(exportId);
}
