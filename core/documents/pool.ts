/**
 * The process's document pool, built once by each composition root (core/services.ts,
 * core/worker-services.ts) from the DOCUMENT_* settings and closed in its shutdown, after the work
 * that used it has drained.
 */
import type { Config } from '../../base/config';
import type { Logger } from '../../base/log';
import { createDocumentPool, DEFAULT_DOCUMENT_LIMITS, type DocumentPool } from '../../engine';

export type DocumentSettings = Pick<
  Config,
  'documentMaxBytes' | 'documentMaxInflatedBytes' | 'documentMaxPages' | 'documentWorkers' | 'documentQueue' | 'documentTimeoutMs' | 'documentMemoryMb'
>;

export function createDocuments(config: DocumentSettings, log: Logger): DocumentPool {
  return createDocumentPool({
    workers: config.documentWorkers,
    queue: config.documentQueue,
    timeoutMs: config.documentTimeoutMs,
    memoryMb: config.documentMemoryMb,
    limits: { ...DEFAULT_DOCUMENT_LIMITS, maxBytes: config.documentMaxBytes, maxInflatedBytes: config.documentMaxInflatedBytes, maxPages: config.documentMaxPages },
    log: log.child({ component: 'documents' }),
  });
}
