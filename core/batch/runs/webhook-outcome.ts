/**
 * A run's webhook outcome on its record, written by the webhook activities (the run has ended: no other
 * writer of its record). They are given the database; the process's one Batch store is found from it.
 */
import type { Db } from 'mongodb';
import { BatchStore, type RunDoc } from '../store';

/** Keeps a run's webhook outcome on its record. */
export async function recordWebhookOutcome(db: Db, runId: string, outcome: NonNullable<RunDoc['webhook_outcome']>): Promise<void> {
  await BatchStore.of(db).runs.updateOne({ _id: runId }, { $set: { webhook_outcome: outcome } });
}

/** A delivery's start failed (`not_started`) or, tried again, succeeded (`pending` again); an outcome already final stays. */
export async function recordWebhookStart(db: Db, runId: string, outcome: 'not_started' | 'pending'): Promise<void> {
  const from = outcome === 'pending' ? 'not_started' : 'pending';
  await BatchStore.of(db).runs.updateOne({ _id: runId, webhook_outcome: from }, { $set: { webhook_outcome: outcome } });
}
