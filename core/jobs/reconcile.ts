/**
 * The reconciler: finds what a start cut short left behind and settles it, per kind of job (crawl,
 * Batch run, Extract preparation; each says how in core/reconcile.ts). Run at API start and on a
 * Temporal Schedule. Only what is older than `graceMs` is looked at: a start still in progress in a
 * live process (at most the Temporal call's time-out) is never touched.
 *
 * | found                                             | done, and why                                   |
 * |---------------------------------------------------|-------------------------------------------------|
 * | a start document whose workflow exists            | document removed: the start went through        |
 * | a start document whose workflow does not exist,   | given back (record removed or failed, slot      |
 * | its claim's owner dead or no claim                | returned, claim dropped): its client never got a|
 * |                                                   | 2xx, so the work was never accepted; a retry    |
 * |                                                   | with the same key starts it afresh              |
 * | … its claim's owner still alive                   | left: that request finishes or gives it back    |
 * | a record waiting for its workflow (no start       | workflow started again under the same id: its   |
 * | document: the start was confirmed) whose workflow | start was confirmed, so it was accepted and must|
 * | does not exist                                    | run                                             |
 * | an active-job slot whose workflow has closed, or  | slot returned: nothing runs in it               |
 * | is missing while its record does not wait for it  |                                                 |
 * | a pending claim, owner dead, no start document    | finished with its record if that exists (the    |
 * |                                                   | start went through; a retry replays it), else   |
 * |                                                   | dropped (nothing was started)                   |
 *
 * FerretDB: every step is an insert, a delete by id, or a compare-and-set on one document; two
 * reconcilers at once do the same harmless things twice.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import type { Logger } from '../../base/log';
import type { ActiveJobDoc, JobKind } from './active-jobs';
import { IDEMPOTENCY_KEYS, ownerAlive, type IdempotencyDoc } from './idempotency';
import { startsCollection, type JobStartDoc, type StartKind } from './start';

/** A start younger than this may still be in progress in a live process. */
export const RECONCILE_GRACE_MS = 2 * 60 * 1000;
const DEFAULT_LIMIT = 500;
/** A workflow started this long before its start document is an earlier execution under a reused id. */
const CLOCK_SKEW_MS = 5_000;

export type WorkflowState = 'running' | 'closed' | 'missing';

/** Temporal could not say: the pass stops (nothing is given back on a guess) and the next one tries again. */
export class TemporalUnanswered extends Error {}

/** Whether workflow `workflowId` runs, has closed or does not exist (an execution before `since` does not count). */
export async function workflowState(client: Client, workflowId: string, since?: Date): Promise<WorkflowState> {
  try {
    const described = await client.workflow.getHandle(workflowId).describe();
    if (since && described.startTime.getTime() < since.getTime() - CLOCK_SKEW_MS) return 'missing';
    return described.status.name === 'RUNNING' ? 'running' : 'closed';
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return 'missing';
    throw new TemporalUnanswered(`Temporal did not describe ${workflowId}: ${(error as Error).message}`, { cause: error });
  }
}

/** How the reconciler settles one kind of job. */
export interface KindReconciler {
  kind: StartKind;
  /** The kind of active-job slot its records hold, if any. */
  slotKind?: JobKind;
  /** Idempotency surface whose claims reserve this kind's records. */
  surface: string;
  workflowId(recordId: string): string;
  /** Gives back a start cut short: its record removed or marked failed, its slot returned. */
  giveBack(start: JobStartDoc): Promise<void>;
  /** Ids of records created before `before` that wait for their workflow's end. */
  unfinished(before: Date, limit: number): Promise<string[]>;
  /** Whether the record still waits for its workflow's end. */
  waiting(recordId: string): Promise<boolean>;
  /** Starts again the workflow of a record whose start was confirmed. */
  restart(recordId: string): Promise<void>;
  /** Whether a claim's reserved record was started (an orphan part left without its start is removed). */
  started(reservedId: string): Promise<boolean>;
}

export interface ReconcileReport {
  confirmed: number;
  gaveBack: number;
  restarted: number;
  slotsReleased: number;
  claimsFinished: number;
  claimsDropped: number;
  errors: number;
}

export interface ReconcileOptions {
  now?: Date;
  graceMs?: number;
  limit?: number;
  /** Called between steps (an activity heartbeats). */
  progress?: () => void;
}

export async function reconcileStarts(deps: { db: Db; client: Client; log: Logger }, kinds: KindReconciler[], options: ReconcileOptions = {}): Promise<ReconcileReport> {
  const now = options.now ?? new Date();
  const before = new Date(now.getTime() - (options.graceMs ?? RECONCILE_GRACE_MS));
  const limit = options.limit ?? DEFAULT_LIMIT;
  const progress = options.progress ?? (() => undefined);
  const starts = startsCollection(deps.db);
  const claims = deps.db.collection<IdempotencyDoc>(IDEMPOTENCY_KEYS);
  const slots = deps.db.collection<ActiveJobDoc>('active_jobs');
  const byKind = new Map(kinds.map((kind) => [kind.kind, kind]));
  const report: ReconcileReport = { confirmed: 0, gaveBack: 0, restarted: 0, slotsReleased: 0, claimsFinished: 0, claimsDropped: 0, errors: 0 };

  /** One item at a time: an error is logged and counted, the rest goes on (Temporal down stops the pass). */
  const each = async <T>(items: T[], what: string, handle: (item: T) => Promise<void>): Promise<void> => {
    for (const item of items) {
      progress();
      try {
        await handle(item);
      } catch (error) {
        if (error instanceof TemporalUnanswered) throw error;
        report.errors++;
        deps.log.warn('reconcile step failed', { what, item: JSON.stringify(item).slice(0, 200), error });
        if (report.errors >= 20) throw error;
      }
    }
  };

  // 1. Starts cut short.
  const cutShort = await starts.find({ created_at: { $lt: before } }).limit(limit).toArray();
  await each(cutShort, 'start', async (start) => {
    const kind = byKind.get(start.kind);
    if (!kind) return;
    if ((await workflowState(deps.client, start.workflow_id, start.created_at)) !== 'missing') {
      await starts.deleteOne({ _id: start._id });
      report.confirmed++;
      return;
    }
    const claim = start.claim_id ? await claims.findOne({ _id: start.claim_id }) : null;
    if (claim?.state === 'pending') {
      if (ownerAlive(claim, now.getTime())) return;
      // Compare-and-set on the owner: a retry taking the claim over at this moment wins.
      const dropped = await claims.deleteOne({ _id: claim._id, owner: claim.owner, state: 'pending' });
      if (dropped.deletedCount === 0) return;
      report.claimsDropped++;
    }
    await kind.giveBack(start);
    await starts.deleteOne({ _id: start._id });
    report.gaveBack++;
  });

  // 2. Records whose confirmed start lost its workflow.
  for (const kind of kinds) {
    const ids = await kind.unfinished(before, limit);
    const pending = new Set((await starts.find({ kind: kind.kind, record_id: { $in: ids } }, { projection: { record_id: 1 } }).toArray()).map((doc) => doc.record_id));
    await each(
      ids.filter((id) => !pending.has(id)),
      `${kind.kind} record`,
      async (recordId) => {
        if ((await workflowState(deps.client, kind.workflowId(recordId))) !== 'missing') return;
        await kind.restart(recordId);
        report.restarted++;
        deps.log.info('reconcile restarted a workflow', { kind: kind.kind, record_id: recordId });
      },
    );
  }

  // 3. Active-job slots nothing runs in.
  const held = await slots.find({ created_at: { $lt: before } }).limit(limit).toArray();
  await each(held, 'slot', async (slot) => {
    const kind = kinds.find((each) => each.slotKind === slot.kind);
    if (!kind) return;
    if (await starts.findOne({ kind: kind.kind, record_id: slot._id }, { projection: { _id: 1 } })) return;
    const state = await workflowState(deps.client, kind.workflowId(slot._id));
    if (state === 'running' || (state === 'missing' && (await kind.waiting(slot._id)))) return;
    await slots.deleteOne({ _id: slot._id, slot: slot.slot });
    report.slotsReleased++;
  });

  // 4. Claims whose owner died before its start was written down, or after it was confirmed.
  const abandoned = await claims.find({ state: 'pending', created_at: { $lt: before } }).limit(limit).toArray();
  await each(abandoned, 'claim', async (claim) => {
    if (ownerAlive(claim, now.getTime())) return;
    if (await starts.findOne({ claim_id: claim._id }, { projection: { _id: 1 } })) return;
    const kind = kinds.find((each) => claim._id.startsWith(`${each.surface}|`));
    const reserved = claim.reserved_id ?? null;
    if (kind && reserved && (await kind.started(reserved))) {
      await claims.updateOne({ _id: claim._id, owner: claim.owner, state: 'pending' }, { $set: { state: 'done', result_id: reserved } });
      report.claimsFinished++;
    } else {
      await claims.deleteOne({ _id: claim._id, owner: claim.owner, state: 'pending' });
      report.claimsDropped++;
    }
  });

  return report;
}
