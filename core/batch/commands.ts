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
import { createInput, uploadInput, type CsvSettings } from './csv-input';
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
      create: (principal: Principal, csv: CsvSettings) => createInput(deps.db, principal.accountId, csv),
      upload: (inputId: string, data: Buffer) => uploadInput(deps.db, inputId, data),
    },
  };
}

export type BatchCommands = ReturnType<typeof createBatchCommands>;
export type { TaskStatus } from './store';
