/**
 * A preparation's end for the job-end routine (core/jobs/end.ts): the domain record leaves `preparing`
 * once, by a conditional update (of the preparation that holds it, when the caller knows which), to
 * `ready` with its recipe version or to `failed` with why; then the month's preparation slot is given
 * back when the failure does not consume it. A re-preparation of a ready domain is not an end of its
 * record (it stays ready) and writes its outcome itself (activities/extract).
 */
import type { Db } from 'mongodb';
import { claimByUpdate, endJob, JobMissing, type JobEndSurface, type JobEnded } from '../jobs/end';
import { extractCollections, SLOT_CONSUMED, type FailureCode, type PreparedDomainDoc, type RoleStatus } from './store';

export type PreparationEnd = (
  | { status: 'ready'; roles: RoleStatus[]; recipeVersion: number; verticals: string[] }
  | { status: 'failed'; roles?: RoleStatus[]; failure: { code: FailureCode; detail: string } }
) & {
  /** The slot of the preparation that ends: only its record is ended. */
  startedBy?: string;
};

export function preparationEndSurface(db: Db): JobEndSurface<PreparationEnd, PreparedDomainDoc, never> {
  const { domains, slots } = extractCollections(db);
  return {
    async claim(domain, end, at) {
      const open = { status: 'preparing' as const, ...(end.startedBy ? { started_by: end.startedBy } : {}) };
      const ours = (record: PreparedDomainDoc) => record.status === end.status && record.updated_at.getTime() === at.getTime();
      if (end.status === 'ready') {
        return claimByUpdate(domains, domain, open, {
          $set: { status: 'ready', state: 'ready', roles: end.roles, recipe_version: end.recipeVersion, verticals: end.verticals, updated_at: at },
          $unset: { failure: '', refresh_failure: '' },
        }, ours);
      }
      const failure = { code: end.failure.code, detail: end.failure.detail, slot_consumed: SLOT_CONSUMED[end.failure.code] };
      return claimByUpdate(domains, domain, open, { $set: { status: 'failed', state: 'failed', ...(end.roles ? { roles: end.roles } : {}), failure, updated_at: at } }, ours);
    },

    async release(_domain, record, end) {
      // The record belongs to another preparation: the one that ends never held it, so nothing of its slot was used.
      const superseded = end.startedBy !== undefined && record.started_by !== end.startedBy;
      const kept = record.status === 'failed' && record.failure !== undefined && !record.failure.slot_consumed;
      const slot = superseded ? end.startedBy : kept ? record.started_by : undefined;
      if (slot) await slots.updateOne({ _id: slot }, { $set: { returned: true } });
    },
  };
}

export function endPreparation(db: Db, domain: string, end: PreparationEnd, at: Date = new Date()): Promise<JobEnded<PreparedDomainDoc, never>> {
  return endJob(preparationEndSurface(db), domain, end, at);
}

/**
 * A preparation whose start never reached its workflow: it reads as interrupted (resubmit unchanged)
 * and its slot returns, also when the domain's record was never written.
 */
export async function giveBackPreparation(db: Db, domain: string, slotId: string, at: Date = new Date()): Promise<void> {
  try {
    await endPreparation(db, domain, { status: 'failed', failure: { code: 'interrupted', detail: 'The preparation could not be started; resubmit unchanged.' }, startedBy: slotId }, at);
  } catch (error) {
    if (!(error instanceof JobMissing)) throw error;
    await extractCollections(db).slots.updateOne({ _id: slotId }, { $set: { returned: true } });
  }
}
