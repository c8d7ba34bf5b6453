/**
 * Batch commands and queries: everything the Batch surface reads and writes, from MongoDB and Temporal
 * (run workflows are started and signalled, never queried). Built once per API process from the
 * process's database (one Batch store, core/batch/store) and handed to the routes, which validate a
 * request, call one command and present what it returns. One module per command:
 *
 *   jobs/create.ts        job creation rules ─> idempotency claim ─> credits probe ─> startJob (regular) | Schedule
 *   jobs/tasks.ts         add tasks (writer mark, slices, signal), close
 *   jobs/delete.ts        a job, a run
 *   jobs/webhook.ts       a job's webhook and its deliveries
 *   runs/controls.ts      pause, resume, stop (recorded, then signalled; a stop answers `stopped` at once)
 *   runs/rerun.ts         full or partial rerun under an idempotency claim
 *   schedules/commands.ts a scheduled job's schedule and its state
 *   exports/commands.ts   a run's exports
 *   inputs/commands.ts    CSV input slots and uploads
 *   queries.ts            jobs, runs, results, task bodies and histories
 */
import type { Db } from 'mongodb';
import { BatchStore } from './store';
import { createCommandContext, type BatchCommandDeps } from './context';
import { exportCommands } from './exports/commands';
import { inputCommands } from './inputs/commands';
import { createJobCommand } from './jobs/create';
import { deleteCommands } from './jobs/delete';
import { taskCommands } from './jobs/tasks';
import { webhookCommands } from './jobs/webhook';
import { batchQueries } from './queries';
import { controlCommands } from './runs/controls';
import { rerunCommand } from './runs/rerun';
import { scheduleCommands } from './schedules/commands';

export function createBatchCommands(deps: Omit<BatchCommandDeps, 'store'> & { db: Db }) {
  const { db, ...rest } = deps;
  const c = createCommandContext({ ...rest, store: BatchStore.of(db) });
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
    inputs: inputCommands(c),
  };
}

export type BatchCommands = ReturnType<typeof createBatchCommands>;

// What the routes name of Batch's records and requests (api/ imports no store module).
export type { TaskStatus } from './run-types';
export type { ExportDoc, JobDoc, RunDoc, SliceDoc, TaskResult, WebhookSetting } from './store/records';
export type { RunView } from './runs/view';
export type { ResultEntry, ResultFilter } from './results/page';
export type { TaskBody } from './queries';
export type { CreateJobRequest } from './jobs/create';
export type { TaskInput } from './jobs/task-input';
export type { JobSchedule, ScheduleState } from './schedules/parse';
export type { CsvSettings } from './inputs/commands';
export { runStatusOf } from './runs/view';
export { isTerminal } from './runs/records';
