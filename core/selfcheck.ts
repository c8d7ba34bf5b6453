/**
 * The pipeline self-check: the API starts a small workflow, the worker's activity writes a record to
 * MongoDB, and the API reads it back. It proves API → Temporal → worker → activity → MongoDB → API.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from 'mongodb';
import { SELF_CHECK_WORKFLOW_TYPE } from './jobs/workflow-names';
import type { IndexRegistration } from '../base/db';
import type { Client } from '@temporalio/client';

export const SELF_CHECKS = 'self_checks';

export const SELF_CHECK_INDEXES: IndexRegistration = { [SELF_CHECKS]: [{ key: { created_at: 1 }, name: 'created_at' }] };

export interface SelfCheckRecord {
  _id: string;
  created_at: Date;
  worker: string;
}

export async function runSelfCheck(
  deps: { client: Client; db: Db; taskQueue: string },
  timeoutMs: number,
): Promise<{ workflowId: string; worker: string }> {
  const token = randomUUID();
  const workflowId = `selfcheck-${token}`;
  const result = await deps.client.workflow.execute(SELF_CHECK_WORKFLOW_TYPE, {
    taskQueue: deps.taskQueue,
    workflowId,
    args: [{ token }],
    workflowExecutionTimeout: `${timeoutMs}ms`,
  });
  const record = await deps.db.collection<SelfCheckRecord>(SELF_CHECKS).findOne({ _id: token });
  if (!record || record.worker !== (result as { worker: string }).worker) {
    throw new Error('the self-check record was not found in the database');
  }
  return { workflowId, worker: record.worker };
}

const KEEP_SELF_CHECKS_MS = 24 * 60 * 60 * 1000;

/** The worker's side: writes the record (idempotent on retry, the token is the key) and prunes old ones (no TTL indexes on FerretDB). */
export async function recordSelfCheck(db: Db, token: string, worker: string): Promise<{ worker: string }> {
  const records = db.collection<SelfCheckRecord>(SELF_CHECKS);
  await records.updateOne({ _id: token }, { $setOnInsert: { created_at: new Date(), worker } }, { upsert: true });
  await records.deleteMany({ created_at: { $lt: new Date(Date.now() - KEEP_SELF_CHECKS_MS) } });
  return { worker };
}
