/**
 * A document failure as the problem document every surface answers: the engine's stable code and
 * status, the cap that was passed (`limit`, named as its setting), and `Retry-After` when the
 * service itself was busy.
 */
import { problem, type ApiError } from '../../base/errors';
import type { DocumentFailure } from '../../engine';

/** Seconds a caller is asked to wait when every document worker is busy. */
export const DOCUMENTS_BUSY_RETRY_SECONDS = 5;

/** The engine's reasons that are a configured cap, by the setting that sets it. */
const LIMITS: Record<string, string> = {
  bytes: 'DOCUMENT_MAX_BYTES',
  zip_inflated_size: 'DOCUMENT_MAX_INFLATED_BYTES',
  pages: 'DOCUMENT_MAX_PAGES',
  memory: 'DOCUMENT_MEMORY_MB',
  timeout: 'DOCUMENT_TIMEOUT_MS',
};

export function documentProblem(failure: DocumentFailure): ApiError {
  const limit = Object.hasOwn(LIMITS, failure.reason) ? LIMITS[failure.reason] : undefined;
  return problem(failure.code, failure.detail, {
    members: { reason: failure.reason, ...(limit ? { limit } : {}) },
    ...(failure.code === 'documents_busy' ? { headers: { 'Retry-After': String(DOCUMENTS_BUSY_RETRY_SECONDS) } } : {}),
  });
}
