/**
 * Worker threads for the engine's work that must not run on an event loop (parsing big pages,
 * converting documents): a bounded pool running named tasks of engine modules. See pool.ts and tasks.ts.
 */
export { isTaskFailure, TaskFailure, WorkerPool, type RunOptions, type TaskFailureReason, type WorkerPoolOptions } from './pool';
export { loadTasksOnThisThread, taskModule, transfer, Transfer, type Transferable, type TaskFunction, type TaskInput, type TaskModule, type TaskOutput, type TaskTable } from './tasks';
