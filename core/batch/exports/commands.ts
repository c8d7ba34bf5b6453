/** A run's exports: one started (its record, then workflow `export-<id>`), one read, and an export's file through its link. */
import { WorkflowIdReusePolicy } from '@temporalio/client';
import type { Principal } from '../../accounts';
import { problem } from '../../../base/errors';
import { newUlid } from '../../../base/ids';
import { BATCH_EXPORT_WORKFLOW_TYPE, batchExportWorkflowId } from '../../jobs/workflow-names';
import type { CommandContext } from '../context';
import { isDeleted } from '../runs/view';
import type { ExportDoc } from '../store';
import { checkConcurrentExports, exportStates } from './limits';
import { exportStillServed, readExport } from './read';

/** How long an export's file is kept. */
const EXPORT_KEEP_MS = 7 * 24 * 3_600_000;

export function exportCommands(c: CommandContext) {
  const { store, deps } = c;
  return {
    async start(principal: Principal, jobId: string, runId: string, format: 'ndjson' | 'csv'): Promise<ExportDoc> {
      const job = await c.ownJob(principal, jobId);
      const view = await c.runs.one({ _id: runId, job_id: job._id });
      if (!view || isDeleted(view)) throw problem('not_found', `No run ${runId} in job ${job._id}.`);
      // Each export being written holds one of the account's `concurrent_exports` slots (limit-gate.ts);
      // one that ends is taken back when the account's slots are all held.
      const now = new Date();
      const id = newUlid(now.getTime());
      const holder = { id, states: (ids: string[]) => exportStates(store, ids), retryAfterSeconds: 30 };
      const doc = await deps.accounts.holdings.admit(principal, 'concurrentExports', holder, async () => {
        await checkConcurrentExports(store, principal);
        const record: ExportDoc = {
          _id: id,
          job_id: job._id,
          run_id: view.run._id,
          account_id: principal.accountId,
          format,
          status: 'pending',
          error: null,
          size: 0,
          chunks: 0,
          created_at: now,
          expires_at: new Date(now.getTime() + EXPORT_KEEP_MS),
        };
        await store.exports.insertOne(record);
        return record;
      });
      await deps.temporal.client.workflow.start(BATCH_EXPORT_WORKFLOW_TYPE, {
        taskQueue: deps.config.temporalTaskQueue,
        workflowId: batchExportWorkflowId(doc._id),
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        args: [doc._id],
      });
      return doc;
    },

    async get(principal: Principal, jobId: string, runId: string, exportId: string): Promise<ExportDoc> {
      const job = await c.ownJob(principal, jobId);
      const doc = await store.exports.findOne({ _id: exportId, job_id: job._id, run_id: runId });
      if (!doc) throw problem('not_found', `No export ${exportId} of this run.`);
      return doc;
    },

    /** A completed export's record and its file's chunks in order, read as they are streamed: undefined when it is gone or not written yet. */
    async linkedFile(exportId: string): Promise<{ doc: ExportDoc; chunks: AsyncIterable<Buffer> } | undefined> {
      const doc = await store.exports.findOne({ _id: exportId });
      if (!doc || doc.status !== 'completed') return undefined;
      // The link dies with its job or run at once, not at the next retention sweep.
      if (!(await exportStillServed(store, doc))) return undefined;
      return { doc, chunks: readExport(store.db, doc) };
    },
  };
}
