/**
 * The document worker pool: conversions run in worker threads, never on the event loop that calls
 * them. A bounded number of workers, each with a V8 heap and stack cap (resourceLimits) and one job at
 * a time under a wall-time cap; a worker that runs over time or memory is terminated and a fresh one
 * takes its place on the next job. Jobs beyond the workers wait in a bounded queue; past it the answer
 * is `documents_busy`. `convert` never rejects.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../base/log';
import { failure } from './failures';
import { DEFAULT_POOL_OPTIONS, type PoolOptions } from './limits';
import type { ConvertOptions, DocumentConversion, DocumentLimits } from './types';

export interface WorkerJob {
  id: number;
  bytes: ArrayBuffer;
  options: ConvertOptions;
  limits: DocumentLimits;
}

export interface WorkerReply {
  id: number;
  result: DocumentConversion;
}

export interface DocumentPoolStats {
  workers: number;
  busy: number;
  queued: number;
  /** Workers ended for running over time or memory, since the pool started. */
  terminated: number;
}

export interface DocumentPool {
  convert(bytes: Uint8Array, options?: ConvertOptions): Promise<DocumentConversion>;
  stats(): DocumentPoolStats;
  /** Ends every worker; queued and running jobs answer `documents_busy`. */
  close(): Promise<void>;
}

interface Pending {
  job: WorkerJob;
  resolve: (result: DocumentConversion) => void;
}

interface Slot {
  worker: Worker;
  current?: Pending;
  timer?: NodeJS.Timeout;
  jobs: number;
  /** Set once the slot is being ended, so its exit does not fail a job twice. */
  ending: boolean;
}

/**
 * The worker's entry: the built worker.js beside this file, or, from the sources, worker.ts loaded
 * through tsx's require hook (a loader given by --import is not in place yet when Node 20 loads a
 * worker's entry file, so a two-line CommonJS bootstrap registers tsx first).
 */
function workerEntry(): { source: string; eval: boolean } {
  const built = path.join(__dirname, 'worker.js');
  if (existsSync(built)) return { source: built, eval: false };
  const tsx = require.resolve('tsx/cjs/api');
  return { source: `require(${JSON.stringify(tsx)}).register();\nrequire(${JSON.stringify(path.join(__dirname, 'worker.ts'))});`, eval: true };
}

export function createDocumentPool(settings: Partial<PoolOptions> & { log?: Logger } = {}): DocumentPool {
  const options: PoolOptions = { ...DEFAULT_POOL_OPTIONS, ...settings, limits: { ...DEFAULT_POOL_OPTIONS.limits, ...settings.limits } };
  const log = settings.log;
  const entry = workerEntry();
  const slots = new Set<Slot>();
  const queue: Pending[] = [];
  let nextId = 1;
  let terminated = 0;
  let closed = false;

  const spawn = (): Slot => {
    const worker = new Worker(entry.source, {
      eval: entry.eval,
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: options.memoryMb, maxYoungGenerationSizeMb: Math.max(16, Math.round(options.memoryMb / 8)), stackSizeMb: options.stackMb },
      stdout: false,
      stderr: false,
    });
    worker.unref();
    const slot: Slot = { worker, jobs: 0, ending: false };
    worker.on('message', (reply: WorkerReply) => {
      const current = slot.current;
      if (!current || reply.id !== current.job.id) return;
      finish(slot, reply.result);
      if (slot.jobs >= options.jobsPerWorker) end(slot);
      pump();
    });
    worker.on('error', (error: Error & { code?: string }) => {
      // ERR_WORKER_OUT_OF_MEMORY: the job needed more heap than a worker has.
      const memory = error.code === 'ERR_WORKER_OUT_OF_MEMORY' || /heap|memory/i.test(error.message);
      log?.warn('document worker failed', { code: error.code, memory });
      if (slot.current) finish(slot, memory ? failure('document_too_large', 'memory', 'Reading the document needs more memory than the service gives one document.') : failure('document_unreadable', 'worker_error', 'The document could not be read.'));
      end(slot);
      pump();
    });
    worker.on('exit', () => {
      slots.delete(slot);
      if (slot.current) finish(slot, failure('document_unreadable', 'worker_exit', 'The document could not be read.'));
      pump();
    });
    slots.add(slot);
    return slot;
  };

  const finish = (slot: Slot, result: DocumentConversion) => {
    const current = slot.current;
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = undefined;
    slot.current = undefined;
    current?.resolve(result);
  };

  const end = (slot: Slot) => {
    if (slot.ending) return;
    slot.ending = true;
    slots.delete(slot);
    void slot.worker.terminate().catch(() => undefined);
  };

  const start = (slot: Slot, pending: Pending) => {
    slot.current = pending;
    slot.jobs++;
    slot.timer = setTimeout(() => {
      terminated++;
      log?.warn('document worker over time, terminated', { timeoutMs: options.timeoutMs });
      finish(slot, failure('document_too_complex', 'timeout', 'Reading the document took longer than the service allows.'));
      end(slot);
      pump();
    }, options.timeoutMs);
    slot.timer.unref();
    slot.worker.postMessage(pending.job, [pending.job.bytes]);
  };

  const idle = (): Slot | undefined => {
    for (const slot of slots) if (!slot.current && !slot.ending) return slot;
    return slots.size < options.workers ? spawn() : undefined;
  };

  const pump = () => {
    while (!closed && queue.length > 0) {
      const slot = idle();
      if (!slot) return;
      start(slot, queue.shift()!);
    }
  };

  return {
    convert(bytes, convertOptions = {}) {
      if (closed) return Promise.resolve(failure('documents_busy', 'closed', 'Document conversion is shutting down.'));
      if (bytes.byteLength > options.limits.maxBytes) return Promise.resolve(failure('document_too_large', 'bytes', `The document is larger than ${options.limits.maxBytes} bytes.`));
      // The queue is the waiting room: a job an idle (or not yet started) worker can take does not wait.
      const free = [...slots].some((slot) => !slot.current && !slot.ending) || slots.size < options.workers;
      if (queue.length >= options.queue && !(free && queue.length === 0)) return Promise.resolve(failure('documents_busy', 'queue', 'Every document worker is busy; try again shortly.'));
      // A copy the worker can own: the caller's buffer may be a view into a shared pool.
      const copy = new ArrayBuffer(bytes.byteLength);
      new Uint8Array(copy).set(bytes);
      return new Promise<DocumentConversion>((resolve) => {
        queue.push({ job: { id: nextId++, bytes: copy, options: convertOptions, limits: options.limits }, resolve });
        pump();
      });
    },
    stats() {
      let busy = 0;
      for (const slot of slots) if (slot.current) busy++;
      return { workers: slots.size, busy, queued: queue.length, terminated };
    },
    async close() {
      closed = true;
      for (const pending of queue.splice(0)) pending.resolve(failure('documents_busy', 'closed', 'Document conversion is shutting down.'));
      const ending = [...slots];
      for (const slot of ending) {
        slot.ending = true;
        if (slot.current) finish(slot, failure('documents_busy', 'closed', 'Document conversion is shutting down.'));
      }
      slots.clear();
      await Promise.all(ending.map((slot) => slot.worker.terminate().catch(() => undefined)));
    },
  };
}
