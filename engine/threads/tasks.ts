/**
 * What runs on a worker thread: named tasks, each a pure function of a serialisable input to a
 * serialisable output (structured clone both ways), exported by a module as `export const tasks = {…}`.
 * A caller names the module with `taskModule` (typed by the module's table, so inputs and outputs are
 * checked) and the task by its name; the thread loads the module the first time one of its tasks runs.
 * Any engine module can define tasks: the HTML outputs do (engine/outputs/tasks.ts), document
 * conversion can, and they share one pool.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { MessagePort } from 'node:worker_threads';

/** What a task's input or answer may move instead of copying. */
export type Transferable = ArrayBuffer | MessagePort;

/** A task: its input and output cross the thread boundary by structured clone (no functions, no class instances that matter). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each task has its own input type; `any` lets one table hold them all
export type TaskFunction = (input: any) => unknown;

export type TaskTable = Readonly<Record<string, TaskFunction>>;

/** A module of tasks, named by its file; `T` is its table's type (`typeof tasks`), used for checking only. */
export interface TaskModule<T extends TaskTable> {
  readonly file: string;
  /** Never set: carries `T`. */
  readonly table?: T;
}

/**
 * The module `name` of `directory` (pass `__dirname`): `name.js` once compiled (dist/), else `name.ts`
 * (run through tsx: tests, `npm start`). Resolved on the calling thread, so workers never guess.
 */
export function taskModule<T extends TaskTable>(directory: string, name: string): TaskModule<T> {
  const compiled = path.join(directory, `${name}.js`);
  return { file: existsSync(compiled) ? compiled : path.join(directory, `${name}.ts`) };
}

/** An answer whose buffers move to the caller instead of being copied (the task must not use them afterwards). */
export class Transfer<T> {
  constructor(
    readonly value: T,
    readonly list: ReadonlyArray<Transferable>,
  ) {}
}

/** `return transfer(bytes, [bytes.buffer])` from a task: the caller receives `bytes`, moved. Never pass a Buffer's shared pool (copy it into its own ArrayBuffer first). */
export const transfer = <T>(value: T, list: ReadonlyArray<Transferable>): Transfer<T> => new Transfer(value, list);

type Unwrapped<O> = O extends Transfer<infer V> ? V : O;

export type TaskInput<T extends TaskTable, N extends keyof T> = Parameters<T[N]>[0];
export type TaskOutput<T extends TaskTable, N extends keyof T> = Unwrapped<Awaited<ReturnType<T[N]>>>;

/** The table a module exports, loaded on this thread (the pool's threads, or the caller's when it runs a task inline). */
export function loadTasks(file: string): TaskTable {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a task module is chosen at run time by its file
  const loaded = require(file) as { tasks?: TaskTable };
  if (!loaded.tasks || typeof loaded.tasks !== 'object') throw new Error(`${file} exports no \`tasks\` table`);
  return loaded.tasks;
}

/** A module's table on the calling thread (to run a task inline, where a thread is not worth it). */
export const loadTasksOnThisThread = <T extends TaskTable>(module: TaskModule<T>): T => loadTasks(module.file) as T;
