/**
 * `prepare-<domain>`: the domain preparation, step by step as its record shows it.
 *
 *   received ─> discovering (skipped with example_urls) ─> preparing (per kind: sample, induce)
 *     ─> verifying (per kind, on held-out pages) ─> ready | failed
 *
 * A kind whose recipe does not verify gets a second, independent attempt (another sample, another
 * split). The domain is ready when one kind is. Cancelling the workflow ends it `interrupted`; a killed
 * worker loses nothing, as every step works from stored snapshots.
 *
 * The Temporal Web UI shows where a preparation is: the search attribute `FetchplaneState` holds the
 * step (filter `FetchplaneState = "verifying"`), the memo and the current details say which kind and
 * attempt, while `FetchplaneStatus` holds the record's status.
 */
import { CancellationScope, isCancellation, proxyActivities, setCurrentDetails, upsertMemo, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { Draft, FailureCode, PreparationState, RoleOutcome, RoleStatus, Sample } from '../core/extract/preparation';
import { STATE_ATTRIBUTE, STATUS_ATTRIBUTE } from '../core/jobs/workflow-names';
import { RECORD_RETRY, stepRetry } from '../core/jobs/retry-rules';

const steps = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  // Every page fetched is a heartbeat: a killed worker's step is retried elsewhere within this.
  heartbeatTimeout: '30 seconds',
  retry: stepRetry(5),
});

const records = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: RECORD_RETRY,
});

export interface PrepareInput {
  domain: string;
  exampleUrls: string[];
  /** Re-preparing a ready domain whose recipe stopped matching: its record stays ready meanwhile. */
  refresh?: boolean;
}

const ATTEMPTS = 2;

/** What an operator sees in the Web UI: the step as a search attribute, and what it works on. */
function show(state: PreparationState, detail: string): void {
  upsertSearchAttributes([{ key: STATE_ATTRIBUTE, value: state }]);
  upsertMemo({ state, step: detail });
  setCurrentDetails(`**${state}**: ${detail}`);
}

export async function prepareDomainWorkflow(input: PrepareInput): Promise<{ status: 'ready' | 'failed' }> {
  const { domain } = input;
  const outcomes: RoleOutcome[] = [];
  const finish = async (failure?: { code: FailureCode; detail: string }) => {
    await CancellationScope.nonCancellable(() => records.extractFinish({ domain, outcomes, ...(input.refresh ? { refresh: true } : {}), ...(failure ? { failure } : {}) }));
    const ready = !failure && outcomes.some((outcome) => outcome.ok);
    upsertSearchAttributes([{ key: STATUS_ATTRIBUTE, value: ready ? 'ready' : 'failed' }]);
    const ended = ready ? `${outcomes.filter((outcome) => outcome.ok).length} of ${outcomes.length} kinds ready` : `${failure?.code ?? 'preparation_exhausted'}: ${failure?.detail ?? ''}`;
    show(ready ? 'ready' : 'failed', input.refresh ? `re-preparation: ${ended}` : ended);
    return { status: ready ? ('ready' as const) : ('failed' as const) };
  };

  try {
    upsertSearchAttributes([{ key: STATUS_ATTRIBUTE, value: 'preparing' }]);
    let discovery;
    if (input.exampleUrls.length > 0) {
      show('received', `${input.exampleUrls.length} example URL(s): discovery skipped`);
      discovery = await steps.extractExamples(domain, input.exampleUrls);
    } else {
      show('discovering', 'sitemaps and a bounded crawl from the home page');
      await records.extractSetState(domain, 'discovering');
      discovery = await steps.extractDiscover(domain);
    }
    if (!discovery.ok) return await finish({ code: discovery.code, detail: discovery.detail });

    const status = (role: string, state: RoleStatus['status'], url: string, detail?: string): RoleStatus => ({ role, status: state, url, ...(detail ? { detail } : {}) });
    show('preparing', `kinds ${discovery.kinds.map((kind) => `${kind.role} (${kind.type})`).join(', ')}`);
    await records.extractSetState(domain, 'preparing', discovery.kinds.map((kind) => status(kind.role, 'preparing', kind.urls[0] ?? '')));

    const pending: Array<{ sample: Sample; draft: Draft; attempt: number; kind: (typeof discovery.kinds)[number] }> = [];
    for (const kind of discovery.kinds) {
      show('preparing', `${kind.role}: sampling and inducing, attempt 1`);
      const sample = await steps.extractSample(domain, kind, 1);
      pending.push({ sample, draft: await steps.extractInduce(sample), attempt: 1, kind });
    }

    show('verifying', `${pending.length} kind(s) on held-out pages`);
    await records.extractSetState(domain, 'verifying');
    for (const item of pending) {
      let { sample, draft } = item;
      let outcome: RoleOutcome | undefined;
      for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
        show('verifying', `${item.kind.role}: attempt ${attempt} of ${ATTEMPTS}`);
        if (attempt > 1) {
          sample = await steps.extractSample(domain, item.kind, attempt);
          draft = await steps.extractInduce(sample);
        }
        if (!draft.ok) {
          outcome = { ok: false, role: item.kind.role, url: item.kind.urls[0] ?? '', reason: draft.reason, detail: draft.detail };
          // Nothing to learn from is the same in any sample; only an unverified recipe earns a second attempt.
          break;
        }
        outcome = await steps.extractVerify(draft.role, sample.verify);
        if (outcome.ok || outcome.reason === 'too_few_pages') break;
      }
      if (outcome) outcomes.push(outcome);
    }

    if (outcomes.some((outcome) => outcome.ok)) return await finish();
    const failures = outcomes.flatMap((outcome) => (outcome.ok ? [] : [outcome]));
    const summary = failures.map((failure) => `${failure.role}: ${failure.detail}`).join(' ');
    if (failures.every((failure) => failure.reason === 'unusable')) return await finish({ code: 'unpreparable', detail: `No sampled page gave usable HTML. ${summary}` });
    if (failures.every((failure) => failure.reason === 'nothing_varies' || failure.reason === 'unusable')) return await finish({ code: 'preparation_failed', detail: summary });
    if (failures.some((failure) => failure.reason === 'too_few_pages') && !failures.some((failure) => failure.reason === 'not_verified')) {
      return await finish({ code: 'verification_failed', detail: summary });
    }
    return await finish({ code: 'preparation_exhausted', detail: `No extraction verified in ${ATTEMPTS} independent attempts. ${summary}` });
  } catch (error) {
    if (isCancellation(error)) return finish({ code: 'interrupted', detail: 'The preparation was stopped on the service side; resubmit unchanged.' });
    throw error;
  }
}
