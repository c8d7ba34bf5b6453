/**
 * The crawl workflow, `crawl-<crawl_id>`: a sliding window of slice activities over a frontier kept in
 * MongoDB, one publish activity at a time writing progress and results, continue-as-new when the
 * history grows (after the window drains). Stop is a signal; the stop call also records the end, and
 * slices check that record before each page, so a lost signal still stops the crawl.
 *
 *   seed slice ─> commit ─> frontier ─┬─> slice ─┐   (up to `window` at once)
 *                                     ├─> slice ─┼─> commit, counters ─> publish (serial) ─> …
 *                                     └─> slice ─┘
 *   end decided ─> publish(end) ─> in-flight slices finish ─> publish(settled) ─> done
 *   gave up (publish failed for good, cancelled) ─> failCrawl: end recorded, settled, end event told
 */
import { ActivityCancellationType, ActivityFailure, ApplicationFailure, CancellationScope, condition, ContinueAsNew, continueAsNew, defineSignal, isCancellation, proxyActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { CrawlEnd, CrawlSpec, CrawlTuning, Progress, SliceInput, SliceResult } from '../core/crawls/types';
import { STATUS_ATTRIBUTE, STOP_CRAWL_SIGNAL } from '../core/jobs/workflow-names';
import { shouldContinueAsNew } from './continue-as-new';
import { applySlice, endWith, initialState, naturalEnd, nextProgress, nextSlice, published, type CrawlState } from './crawl-state';
import { lightActivities } from './light-queue';
import { RECORD_RETRY, stepRetry } from '../core/jobs/retry-rules';

const { crawlSlice } = proxyActivities<Activities>({
  startToCloseTimeout: '15 minutes',
  // A killed worker's slice is retried elsewhere within this.
  heartbeatTimeout: '10 seconds',
  retry: stepRetry(8),
  // Through the task queue, so any worker takes a slice (eager dispatch keeps them on the workflow's worker).
  allowEagerDispatch: false,
});


export const stopCrawlSignal = defineSignal(STOP_CRAWL_SIGNAL);

export interface CrawlWorkflowInput {
  spec: CrawlSpec;
  tuning: CrawlTuning;
  /** Carried over by continue-as-new. */
  state?: CrawlState;
}

function messageOf(error: unknown): string {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  return cause instanceof Error ? cause.message : String(cause);
}

/**
 * Every way the workflow ends ends the crawl: one that gives up (a publish failed for good, a cancel)
 * records the crawl's end and tells it before it closes, in an activity a killed worker's successor retries.
 */
export async function crawlWorkflow(input: CrawlWorkflowInput): Promise<CrawlEnd> {
  const inFlight: InFlight = {};
  try {
    return await runCrawl(input, inFlight);
  } catch (error) {
    // Continue-as-new is how a long crawl goes on, not an end.
    if (error instanceof ContinueAsNew) throw error;
    const { failCrawl } = lightActivities({ startToCloseTimeout: '30 seconds', retry: RECORD_RETRY });
    const detail = isCancellation(error) ? 'The crawl’s workflow was cancelled.' : `The crawl could not go on: ${messageOf(error)}`;
    await CancellationScope.nonCancellable(async () => {
      // The crawl document has one writer: a publish the cancel cut short lands first.
      await inFlight.publish?.catch(() => undefined);
      await failCrawl({ crawlId: input.spec.crawlId, detail });
    });
    throw error;
  }
}

/** The publish in flight, if any (its outcome goes into the state; the promise is only waited for). */
interface InFlight {
  publish?: Promise<void>;
}

async function runCrawl(input: CrawlWorkflowInput, inFlight: InFlight): Promise<CrawlEnd> {
  const { spec, tuning } = input;
  const state = input.state ?? initialState();
  // A few small writes, on the light task queue: a publish lost with its worker is retried after 30 s;
  // unlimited attempts, as a crawl's record must be written even after a long database outage. A
  // cancel waits for the attempt running to end, so that the failure handler writes after it.
  const { publishCrawl } = lightActivities({ startToCloseTimeout: '30 seconds', retry: RECORD_RETRY, cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED });
  let wake = 0;
  let stopRequested = false;
  setHandler(stopCrawlSignal, () => {
    stopRequested = true;
    wake++;
  });

  const running = new Map<number, number>();
  const finished: Array<{ k: number; result?: SliceResult; error?: string }> = [];
  let publishing = false;
  let publishError: string | undefined;
  let draining = false;

  const start = (slice: SliceInput): void => {
    running.set(slice.k, slice.ranges[0]?.depth ?? 0);
    void crawlSlice(slice).then(
      (result) => {
        finished.push({ k: slice.k, result });
        wake++;
      },
      (error: unknown) => {
        finished.push({ k: slice.k, error: messageOf(error) });
        wake++;
      },
    );
  };

  const publish = (progress: Progress, end: CrawlEnd | undefined): void => {
    publishing = true;
    inFlight.publish = publishCrawl({ crawlId: spec.crawlId, progress, ...(end ? { end } : {}) }).then(
      (result) => {
        published(state, progress, result.droppedKept);
        if (result.end && !state.endRecorded) {
          const { finished_at: _at, ...recorded } = result.end;
          state.end = recorded;
          state.endRecorded = true;
          upsertSearchAttributes([{ key: STATUS_ATTRIBUTE, value: recorded.status }]);
        }
        publishing = false;
        wake++;
      },
      (error: unknown) => {
        publishError = messageOf(error);
        publishing = false;
        wake++;
      },
    );
  };

  for (;;) {
    const seen = wake;
    if (publishError) throw ApplicationFailure.nonRetryable(`crawl ${spec.crawlId} could not be recorded: ${publishError}`, 'CrawlPublishFailed');
    if (stopRequested) endWith(state, { status: 'stopped', stop_reason: 'user' });
    for (let done = finished.shift(); done; done = finished.shift()) {
      running.delete(done.k);
      if (done.result) applySlice(spec, state, done.result);
      else endWith(state, { status: 'failed', error: { code: 'internal_error', detail: `A crawl step failed repeatedly: ${done.error ?? 'unknown error'}` } });
    }
    if (!draining) {
      while (running.size < tuning.window) {
        const slice = nextSlice(spec, tuning, state, [...running.values()], tuning.window - running.size);
        if (!slice) break;
        start(slice);
      }
      if (running.size === 0) naturalEnd(spec, state);
    }
    if (!publishing) {
      const progress = nextProgress(state, running.size);
      if (progress) publish(progress, state.end && !state.endRecorded ? state.end : undefined);
    }
    if (state.settled && !publishing && state.end) return state.end;

    if (!draining && !state.end && shouldContinueAsNew(tuning.historyLimit)) draining = true;
    if (draining && !state.end && running.size === 0 && !publishing) {
      await continueAsNew<typeof crawlWorkflow>({ spec, tuning, state });
    }
    if (draining && state.end) draining = false;
    await condition(() => wake !== seen);
  }
}
