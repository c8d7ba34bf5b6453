/**
 * The one way a job's workflow is started: crawls, Batch runs (manual, rerun) and Extract
 * preparations. A start is written down before anything is taken (`job_starts`, one document per
 * record, insert-only), then the caller's `take` (slot, record: each idempotent by the record's id),
 * then the workflow, whose id derives from the record's id, so a second start of the same record is
 * harmless (already started counts as started). Only when the workflow is known to exist is the start
 * document removed: a start document left behind marks a start cut short, which the reconciler
 * (core/reconcile.ts) finishes or gives back.
 *
 * When the workflow cannot be started (Temporal unreachable) the start gives back what it took and
 * rethrows, unless another request took the start over meanwhile (its `owned` says so): then that
 * request finishes or gives it back.
 */
import { WorkflowExecutionAlreadyStartedError, type Client, type WorkflowStartOptions } from '@temporalio/client';
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey, type IndexRegistration } from '../../base/db';

export type StartKind = 'crawl' | 'batch' | 'prepare';

export const JOB_STARTS = 'job_starts';

export const JOB_START_INDEXES: IndexRegistration = {
  [JOB_STARTS]: [
    { key: { created_at: 1 }, name: 'created_at' },
    { key: { record_id: 1 }, name: 'record_id' },
  ],
};

export interface JobStartDoc {
  /** `<kind>:<record id>`, then `:<attempt>` when the record is started more than once (a domain). */
  _id: string;
  kind: StartKind;
  record_id: string;
  account_id: string;
  workflow_id: string;
  /** The idempotency key document the start answers, if the request had one. */
  claim_id: string | null;
  /** What else tells this start from an earlier one of the same record (a preparation's slot). */
  attempt: string | null;
  created_at: Date;
}

export interface StartPlan {
  kind: StartKind;
  recordId: string;
  accountId: string;
  claimId?: string | null;
  attempt?: string;
  workflowType: string;
  workflow: WorkflowStartOptions;
  /** Takes what the job needs before its workflow runs; taking it again for the same record is harmless. */
  take(): Promise<void>;
  /** Gives back what `take` took (a refused or failed start leaves nothing held). */
  giveBack(): Promise<void>;
  /** Whether this request still owns the start (an idempotency claim taken over by a retry does not). */
  owned?(): Promise<boolean>;
}

export const startsCollection = (db: Db): Collection<JobStartDoc> => db.collection<JobStartDoc>(JOB_STARTS);
export const startId = (kind: StartKind, recordId: string, attempt?: string | null): string => `${kind}:${recordId}${attempt ? `:${attempt}` : ''}`;

/** A start written down and what it took: given back on a failure, confirmed once its workflow exists. */
export interface BegunStart {
  /** Gives back what the start took and forgets it (unless another request took the start over). */
  giveBack(): Promise<void>;
  /** The workflow exists: from here on it owns the record. */
  confirm(): Promise<void>;
}

/**
 * The first half of a start: the start written down, then what the job needs taken (a refused take
 * gives everything back and rethrows). Its workflow is started by the caller, here (`startJob`) or as
 * a child of a workflow (a scheduled Batch fire's run): until it is confirmed, the start document marks
 * it as cut short for the reconciler.
 */
export async function beginStart(db: Db, plan: StartPlan): Promise<BegunStart> {
  const starts = startsCollection(db);
  const id = startId(plan.kind, plan.recordId, plan.attempt);
  try {
    await starts.insertOne({
      _id: id,
      kind: plan.kind,
      record_id: plan.recordId,
      account_id: plan.accountId,
      workflow_id: plan.workflow.workflowId,
      claim_id: plan.claimId ?? null,
      attempt: plan.attempt ?? null,
      created_at: new Date(),
    });
  } catch (error) {
    // A start cut short of the same record: this one finishes it.
    if (!isDuplicateKey(error)) throw error;
  }
  const giveBack = async (): Promise<void> => {
    if (plan.owned && !(await plan.owned().catch(() => false))) return;
    await plan.giveBack().catch(() => undefined);
    await starts.deleteOne({ _id: id }).catch(() => undefined);
  };
  try {
    await plan.take();
  } catch (error) {
    await giveBack();
    throw error;
  }
  return {
    giveBack,
    confirm: async () => {
      await starts.deleteOne({ _id: id });
    },
  };
}

/** A start whose workflow is known to exist (it runs and reports): its start document, if any is left, goes. */
export async function confirmStart(db: Db, kind: StartKind, recordId: string, attempt?: string | null): Promise<void> {
  await startsCollection(db).deleteOne({ _id: startId(kind, recordId, attempt) });
}

/** Starts (or finishes starting) a job; answers once its workflow exists. */
export async function startJob(deps: { db: Db; client: Client }, plan: StartPlan): Promise<void> {
  const started = await beginStart(deps.db, plan);
  try {
    await deps.client.workflow.start(plan.workflowType, plan.workflow);
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) {
      await started.giveBack();
      throw error;
    }
  }
  // Confirmed: from here on the workflow owns the record (a failure here leaves the document for the reconciler).
  await started.confirm();
}
