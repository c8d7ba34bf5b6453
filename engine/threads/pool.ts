/**
 * A bounded pool of worker threads for work that must not run on an event loop: at most `size`
 * threads (started on demand, ended after `idleMs` without work), one task at a time on each, a
 * bounded queue in front. Each task has a time budget (the thread is terminated past it and another
 * takes its place) and each thread a memory budget (`resourceLimits`: a task past it ends its thread).
 * Either way the task's caller gets a `TaskFailure` naming the budget, and the pool serves the next task.
 *
 *   const pool = new WorkerPool({ size: 2, queueLimit: 32, timeoutMs: 15_000, memoryMb: 512 });
 *   const markdown = await pool.run(OUTPUT_TASKS, 'markdown', input, { signal });
 *   await pool.close();
 *
 * The thread's entry is worker.ts next to this file, or worker.js in the compiled dist/: under tsx
 * (tests, `npm start`) the thread registers tsx's require hook itself, since a thread's entry file is
 * loaded before any `--import` hook of its own would run.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../base/log';
import type { TaskInput, TaskModule, TaskOutput, TaskTable, Transferable } from './tasks';
import type { AnswerMessage, TaskMessage } from './worker';

export interface WorkerPoolOptions {
  /** Threads at most. */
  size: number;
  /** Tasks waiting for a thread at most; past it `run` fails at once (`queue_full`). */
  queueLimit: number;
  /** Time budget of a task (from when a thread starts it), unless its `run` gives its own. */
  timeoutMs: number;
  /** Memory budget of each thread: its V8 heap (old generation) in MB. */
  memoryMb: number;
  /** A thread without work this long ends (default 60 s; 0 keeps threads). */
  idleMs?: number;
  log?: Logger;
}

export interface RunOptions {
  /** This task's time budget instead of the pool's. */
  timeoutMs?: number;
  /** Buffers of the input moved to the thread, not copied (the caller must not use them afterwards). */
  transfer?: ReadonlyArray<Transferable>;
  /** Aborting drops a waiting task; a running one is left to finish (its answer is dropped). */
  signal?: AbortSignal;
}

/**
 * Why a task gave no answer: `timeout` and `memory` name its budgets, `queue_full` the queue's bound,
 * `closed` the pool's shutdown, `aborted` the caller's signal, `crashed` a thread that died otherwise,
 * `error` an error the task threw (its message is kept).
 */
export type TaskFailureReason = 'timeout' | 'memory' | 'queue_full' | 'closed' | 'aborted' | 'crashed' | 'error';

export class TaskFailure extends Error {
  readonly kind = 'task-failure';

  constructor(
    readonly reason: TaskFailureReason,
    /** `module:task`. */
    readonly task: string,
    message: string,
  ) {
    super(message);
    this.name = 'TaskFailure';
  }
}

/** Discriminates without `instanceof` (module copies in tests). */
export const isTaskFailure = (error: unknown): error is TaskFailure =>
  typeof error === 'object' && error !== null && (error as { kind?: unknown }).kind === 'task-failure';

interface Job {
  id: number;
  message: TaskMessage;
  label: string;
  transfer: ReadonlyArray<Transferable>;
  timeoutMs: number;
  settled: boolean;
  resolve(value: unknown): void;
  reject(error: TaskFailure): void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

interface Thread {
  worker: Worker;
  job?: Job;
  timer?: NodeJS.Timeout;
  idleTimer?: NodeJS.Timeout;
  /** Why the thread is ending, when the pool ended it or it broke its memory budget. */
  ending?: TaskFailureReason;
  exited: Promise<void>;
}

const ENTRY = path.join(__dirname, `worker${path.extname(__filename)}`);

function startThread(memoryMb: number): Worker {
  const options = { resourceLimits: { maxOldGenerationSizeMb: memoryMb }, execArgv: [] as string[] };
  if (ENTRY.endsWith('.ts')) {
    const hook = require.resolve('tsx/cjs');
    return new Worker(`require(${JSON.stringify(hook)}); require(${JSON.stringify(ENTRY)});`, { ...options, eval: true });
  }
  return new Worker(ENTRY, options);
}

export class WorkerPool {
  private readonly threads = new Set<Thread>();
  private readonly idle: Thread[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;
  private readonly idleMs: number;

  constructor(private readonly options: WorkerPoolOptions) {
    if (options.size < 1 || options.queueLimit < 0 || options.timeoutMs <= 0 || options.memoryMb < 16) throw new Error('WorkerPool: size ≥ 1, queueLimit ≥ 0, timeoutMs > 0 and memoryMb ≥ 16');
    this.idleMs = options.idleMs ?? 60_000;
  }

  /** Runs task `name` of `module` on a thread with `input`; resolves to its output or rejects with a TaskFailure. */
  run<T extends TaskTable, N extends keyof T & string>(module: TaskModule<T>, name: N, input: TaskInput<T, N>, options: RunOptions = {}): Promise<TaskOutput<T, N>> {
    const label = `${path.basename(module.file).replace(/\.[jt]s$/, '')}:${name}`;
    if (this.closed) return Promise.reject(new TaskFailure('closed', label, 'The worker pool is closed.'));
    if (options.signal?.aborted) return Promise.reject(new TaskFailure('aborted', label, 'The task was cancelled.'));
    return new Promise<TaskOutput<T, N>>((resolve, reject) => {
      const id = this.nextId++;
      const job: Job = {
        id,
        message: { id, file: module.file, name, input },
        label,
        transfer: options.transfer ?? [],
        timeoutMs: options.timeoutMs ?? this.options.timeoutMs,
        settled: false,
        resolve: (value) => resolve(value as TaskOutput<T, N>),
        reject,
        ...(options.signal ? { signal: options.signal } : {}),
      };
      const thread = this.idle.pop() ?? (this.threads.size < this.options.size ? this.spawn() : undefined);
      if (thread) {
        this.start(thread, job);
        return;
      }
      if (this.queue.length >= this.options.queueLimit) {
        reject(new TaskFailure('queue_full', label, `${this.queue.length} tasks already wait for a thread.`));
        return;
      }
      this.queue.push(job);
      if (job.signal) {
        job.onAbort = () => {
          const index = this.queue.indexOf(job);
          if (index >= 0) this.queue.splice(index, 1);
          this.settle(job, new TaskFailure('aborted', label, 'The task was cancelled.'));
        };
        job.signal.addEventListener('abort', job.onAbort, { once: true });
      }
    });
  }

  /** Threads started, threads running a task, tasks waiting. */
  stats(): { threads: number; busy: number; queued: number } {
    let busy = 0;
    for (const thread of this.threads) if (thread.job) busy++;
    return { threads: this.threads.size, busy, queued: this.queue.length };
  }

  /** Refuses new tasks, fails the waiting and running ones (`closed`) and ends every thread. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) this.settle(job, new TaskFailure('closed', job.label, 'The worker pool is closing.'));
    const exits: Array<Promise<void>> = [];
    for (const thread of this.threads) {
      thread.ending ??= 'closed';
      exits.push(thread.exited);
      void thread.worker.terminate();
    }
    await Promise.all(exits);
  }

  private spawn(): Thread {
    const worker = startThread(this.options.memoryMb);
    let exit!: () => void;
    const thread: Thread = { worker, exited: new Promise<void>((resolve) => (exit = resolve)) };
    worker.on('message', (answer: AnswerMessage) => this.answered(thread, answer));
    worker.on('error', (error: Error & { code?: string }) => {
      if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') thread.ending ??= 'memory';
      else this.options.log?.warn('worker thread failed', { error, task: thread.job?.label });
    });
    worker.on('exit', () => {
      this.ended(thread);
      exit();
    });
    this.threads.add(thread);
    return thread;
  }

  private start(thread: Thread, job: Job): void {
    if (job.onAbort) job.signal?.removeEventListener('abort', job.onAbort);
    if (job.signal) {
      // The caller stops waiting; the thread finishes the task (its budget bounds it) and its answer is dropped.
      job.onAbort = () => this.settle(job, new TaskFailure('aborted', job.label, 'The task was cancelled.'));
      job.signal.addEventListener('abort', job.onAbort, { once: true });
    }
    if (thread.idleTimer) clearTimeout(thread.idleTimer);
    thread.idleTimer = undefined;
    thread.job = job;
    thread.worker.ref();
    thread.timer = setTimeout(() => this.timedOut(thread), job.timeoutMs);
    try {
      thread.worker.postMessage(job.message, [...job.transfer]);
    } catch (error) {
      // The input could not be cloned: the task never reached the thread.
      clearTimeout(thread.timer);
      thread.job = undefined;
      this.settle(job, new TaskFailure('error', job.label, `The task's input cannot be sent to a thread: ${(error as Error).message}`));
      this.release(thread);
    }
  }

  private answered(thread: Thread, answer: AnswerMessage): void {
    const job = thread.job;
    if (!job || answer.id !== job.id) return;
    clearTimeout(thread.timer);
    thread.job = undefined;
    if (answer.ok) this.settle(job, undefined, answer.value);
    else this.settle(job, new TaskFailure('error', job.label, answer.error.message));
    this.release(thread);
  }

  private release(thread: Thread): void {
    const next = this.queue.shift();
    if (next) {
      this.start(thread, next);
      return;
    }
    thread.worker.unref();
    this.idle.push(thread);
    if (this.idleMs > 0) {
      thread.idleTimer = setTimeout(() => {
        thread.ending = 'closed';
        void thread.worker.terminate();
      }, this.idleMs);
      thread.idleTimer.unref();
    }
  }

  private timedOut(thread: Thread): void {
    const job = thread.job;
    if (!job) return;
    thread.ending = 'timeout';
    this.options.log?.warn('worker thread task past its time budget', { task: job.label, timeout_ms: job.timeoutMs });
    void thread.worker.terminate();
  }

  /** A thread ended (terminated, out of memory, crashed): its task fails with the reason; queued tasks get new threads. */
  private ended(thread: Thread): void {
    this.threads.delete(thread);
    const index = this.idle.indexOf(thread);
    if (index >= 0) this.idle.splice(index, 1);
    clearTimeout(thread.timer);
    if (thread.idleTimer) clearTimeout(thread.idleTimer);
    const job = thread.job;
    thread.job = undefined;
    if (job) {
      const reason = thread.ending ?? 'crashed';
      const budget =
        reason === 'timeout'
          ? `The task ran past its time budget of ${job.timeoutMs} ms and was stopped.`
          : reason === 'memory'
            ? `The task needed more than the ${this.options.memoryMb} MB a thread may use.`
            : reason === 'closed'
              ? 'The worker pool is closing.'
              : 'The thread running the task stopped.';
      this.settle(job, new TaskFailure(reason, job.label, budget));
    }
    while (!this.closed && this.queue.length > 0 && this.threads.size < this.options.size) this.start(this.spawn(), this.queue.shift() as Job);
  }

  private settle(job: Job, error: TaskFailure | undefined, value?: unknown): void {
    if (job.settled) return;
    job.settled = true;
    if (job.onAbort) job.signal?.removeEventListener('abort', job.onAbort);
    if (error) job.reject(error);
    else job.resolve(value);
  }
}
