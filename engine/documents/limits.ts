/**
 * Default caps of a conversion and of the worker pool. The surfaces pass the configured values
 * (DOCUMENT_MAX_BYTES and friends, read by the config module); these defaults serve tests and tools.
 */
import type { DocumentLimits } from './types';

export const DEFAULT_DOCUMENT_LIMITS: DocumentLimits = {
  maxBytes: 50 * 1024 * 1024,
  // A 50 MB spreadsheet of XML inflates to a few hundred MB; text documents stay far below this.
  maxInflatedBytes: 100 * 1024 * 1024,
  maxEntries: 10_000,
  maxPages: 2_000,
  maxCells: 2_000_000,
  maxDepth: 200,
  maxTextChars: 20 * 1024 * 1024,
};

export interface PoolOptions {
  /** Worker threads at most; each holds one conversion at a time. */
  workers: number;
  /** Conversions waiting for a worker at most; past it, `documents_busy`. */
  queue: number;
  /** Wall time of one conversion, after which its worker is terminated and replaced. */
  timeoutMs: number;
  /** V8 heap of a worker (resourceLimits.maxOldGenerationSizeMb): past it the worker dies and is replaced. */
  memoryMb: number;
  /** Stack of a worker (resourceLimits.stackSizeMb). */
  stackMb: number;
  /** A worker is retired after this many jobs, so what a library leaks or caches does not pile up. */
  jobsPerWorker: number;
  limits: DocumentLimits;
}

export const DEFAULT_POOL_OPTIONS: PoolOptions = {
  workers: 2,
  queue: 64,
  timeoutMs: 60_000,
  memoryMb: 512,
  stackMb: 4,
  jobsPerWorker: 200,
  limits: DEFAULT_DOCUMENT_LIMITS,
};
