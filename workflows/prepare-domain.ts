/**
 * `prepare-<domain>`: the domain preparation, step by step as its record shows it.
 *
 *   received ─> discovering (skipped with example_urls) ─> preparing (per kind: sample, induce)
 *     ─> verifying (per kind, on held-out pages) ─> ready | failed
 *
 * A kind whose recipe does not verify gets a second, independent attempt (another sample, another
 * split). The domain is ready when one kind is. Cancelling the workflow ends it `interrupted`; a killed
 * worker loses nothing, as every step works from stored snapshots.
 */
import { CancellationScope, isCancellation, proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { Draft, RoleOutcome, Sample } from '../core/extract/preparation';
import type { FailureCode, RoleStatus } from '../core/extract/store';
import { STATUS_ATTRIBUTE } from '../core/crawls/workflow-names';

const steps = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  // Every page fetched is a heartbeat: a killed worker's step is retried elsewhere within this.
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
});

const records = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

export interface PrepareInput {
  domain: string;
  exampleUrls: string[];
  /** Re-preparing a ready domain whose recipe stopped matching: its record stays ready meanwhile. */
  refresh?: boolean;
}

const ATTEMPTS = 2;

export async function prepareDomainWorkflow(input: PrepareInput): Promise<{ status: 'ready' | 'failed' }> {
  const { domain } = input;
  const outcomes: RoleOutcome[] = [];
  const finish = async (failure?: { code: FailureCode; detail: string }) => {
    await CancellationScope.nonCancellable(() => records.extractFinish({ domain, outcomes, ...(input.refresh ? { refresh: true } : {}), ...(failure ? { failure } : {}) }));
    const ready = !failure && outcomes.some((outcome) => outcome.ok);
    upsertSearchAttributes([{ key: STATUS_ATTRIBUTE, value: ready ? 'ready' : 'failed' }]);
    return { status: ready ? ('ready' as const) : ('failed' as const) };
  };

  try {
    upsertSearchAttributes([{ key: STATUS_ATTRIBUTE, value: 'preparing' }]);
    let discovery;
    if (input.exampleUrls.length > 0) {
      discovery = await steps.extractExamples(domain, input.exampleUrls);
    } else {
      await records.extractSetState(domain, 'discovering');
      discovery = await steps.extractDiscover(domain);
    }
    if (!discovery.ok) return await finish({ code: discovery.code, detail: discovery.detail });

    const status = (role: string, state: RoleStatus['status'], url: string, detail?: string): RoleStatus => ({ role, status: state, url, ...(detail ? { detail } : {}) });
    await records.extractSetState(domain, 'preparing', discovery.kinds.map((kind) => status(kind.role, 'preparing', kind.urls[0] ?? '')));

    const pending: Array<{ sample: Sample; draft: Draft; attempt: number; kind: (typeof discovery.kinds)[number] }> = [];
    for (const kind of discovery.kinds) {
      const sample = await steps.extractSample(domain, kind, 1);
      pending.push({ sample, draft: await steps.extractInduce(sample), attempt: 1, kind });
    }

    await records.extractSetState(domain, 'verifying');
    for (const item of pending) {
      let { sample, draft } = item;
      let outcome: RoleOutcome | undefined;
      for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
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
