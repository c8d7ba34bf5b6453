/**
 * Document failures: thrown as `DocumentError` inside a conversion (deep in a parser, where returning
 * a union through every call would drown the code), caught once at the edge of the worker and turned
 * into a `DocumentFailure`. A surface maps the code through DOCUMENT_FAILURES to its problem document.
 */
import type { DocumentFailure, DocumentFailureCode } from './types';

export const DOCUMENT_FAILURES: Record<DocumentFailureCode, { status: number; title: string }> = {
  document_unsupported: { status: 415, title: 'Document format not supported' },
  document_unreadable: { status: 422, title: 'Document could not be read' },
  document_encrypted: { status: 422, title: 'Document is encrypted' },
  document_too_large: { status: 413, title: 'Document too large' },
  document_too_complex: { status: 422, title: 'Document too complex' },
  documents_busy: { status: 503, title: 'Document conversion busy' },
};

export class DocumentError extends Error {
  constructor(
    readonly code: DocumentFailureCode,
    readonly reason: string,
    detail: string,
  ) {
    super(detail);
    this.name = 'DocumentError';
  }
}

export const documentError = (code: DocumentFailureCode, reason: string, detail: string): DocumentError => new DocumentError(code, reason, detail);

export function failure(code: DocumentFailureCode, reason: string, detail: string): DocumentFailure {
  return { ok: false, code, reason, detail };
}

/**
 * Any error a parser threw, as a failure. Our own errors keep their code; a stack overflow is nesting
 * deeper than the parsers can follow; anything else from a library means the bytes could not be read
 * (libraries throw on corrupt input in many shapes, none of them stable enough to sort further).
 */
export function toFailure(error: unknown): DocumentFailure {
  if (error instanceof DocumentError || (typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'DocumentError')) {
    const known = error as DocumentError;
    return failure(known.code, known.reason, known.message);
  }
  if (error instanceof RangeError && /call stack/i.test(error.message)) {
    return failure('document_too_complex', 'stack', 'The document nests deeper than the service follows.');
  }
  const name = typeof error === 'object' && error !== null ? String((error as { name?: unknown }).name ?? '') : '';
  if (name === 'PasswordException') return failure('document_encrypted', 'pdf_password', 'The PDF needs a password to be opened.');
  return failure('document_unreadable', 'parse', 'The document is corrupt or truncated and could not be read.');
}
