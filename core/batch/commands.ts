/**
 * Batch commands and queries: everything the Batch surface reads and writes, from MongoDB and Temporal
 * (run workflows are started and signalled, never queried). The API validates a request, calls one
 * command and presents what it returns. One module per command (commands/):
 *
 *   create.ts    job creation rules ─> idempotency claim ─> credits probe ─> startJob (regular) | Schedule
 *   tasks.ts     add tasks (writer mark, slices, signal), close
 *   controls.ts  pause, resume, stop (recorded, then signalled; a stop answers `stopped` at once)
 *   rerun.ts     full or partial rerun under an idempotency claim
 *   delete.ts    a job, a run
 *   schedule.ts  a scheduled job's schedule and its state
 *   webhook.ts   a job's webhook and its deliveries
 *   exports.ts   a run's exports
 *   queries.ts   jobs, runs, results, task bodies and histories
 *   csv-input.ts (beside) CSV input slots and uploads
 */
import type { Principal } from '../accounts';
import { allocateInput, storeUpload, type CsvOptions } from './inputs/uploads';
import { planOfAccount } from '../accounts/limits';
import { batchCollections, type JobInputDoc } from './store';
import { problem } from '../../base/errors';
import { createCommandContext, type BatchCommandDeps } from './commands/context';
import { controlCommands } from './commands/controls';
import { createJobCommand } from './commands/create';
import { deleteCommands } from './commands/delete';
import { exportCommands } from './commands/exports';
import { batchQueries } from './commands/queries';
import { rerunCommand } from './commands/rerun';
import { scheduleCommands } from './commands/schedule';
import { taskCommands } from './commands/tasks';
import { webhookCommands } from './commands/webhook';

export function createBatchCommands(deps: BatchCommandDeps) {
  const c = createCommandContext(deps);
  const webhook = webhookCommands(c);
  const controls = controlCommands(c);
  const tasks = taskCommands(c);
  return {
    create: createJobCommand(c, webhook),
    addTasks: tasks.add,
    close: tasks.close,
    pause: controls.pause,
    resume: controls.resume,
    stop: controls.stop,
    rerun: rerunCommand(c),
    ...deleteCommands(c, controls),
    ...scheduleCommands(c),
    webhook,
    exports: exportCommands(c),
    query: batchQueries(c),
    inputs: {
      // Counted and created one after the other per account, a refusal remembered (limit-gate.ts).
      create: (principal: Principal, csv: CsvSettings) =>
        deps.accounts.holdings.admit(principal.accountId, 'storedInputs', () => allocateInput(deps.db, principal, { delimiter: csv.delimiter ?? ',', quote: csv.quote ?? '"', header: csv.header ?? false, fields: csv.fields })),
      /** Stores the upload of slot `inputId` (reached through its link) as it arrives: false when the slot is unknown or expired. */
      async upload(inputId: string, body: AsyncIterable<Buffer>, declaredBytes: number): Promise<boolean> {
        const doc: JobInputDoc | null = await batchCollections(deps.db).inputs.findOne({ _id: inputId });
        if (!doc || doc.expires_at.getTime() < Date.now()) return false;
        if (doc.uploaded) throw problem('conflict', 'This input was already uploaded.');
        await storeUpload(deps.db, doc, await planOfAccount(deps.accounts, doc.account_id), body, deps.config.csvInputMaxBytes, declaredBytes);
        return true;
      },
    },
  };
}

export type BatchCommands = ReturnType<typeof createBatchCommands>;
export type { TaskStatus } from './store';

export type CsvSettings = Omit<CsvOptions, 'delimiter' | 'quote' | 'header'> & { delimiter?: string; quote?: string; header?: boolean };
