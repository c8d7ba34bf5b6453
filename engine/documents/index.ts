/**
 * Documents (PDF, DOCX, PPTX, XLSX, ODT/ODS/ODP, CSV) to Markdown or plain text with their structure,
 * and the `document` metadata. Surfaces use `detectDocument` (cheap, on their own thread) and a pool's
 * `convert` (off it). See README.md.
 */
export { detectDocument, documentFormatOfName, documentFormatOfType, isLegacyOffice, extensionOf, fileNameFromDisposition, mimeOf, mimeOfFormat } from './detect';
export { DOCUMENT_FAILURES } from './failures';
export { DEFAULT_DOCUMENT_LIMITS, DEFAULT_POOL_OPTIONS, type PoolOptions } from './limits';
export { createDocumentPool, type DocumentPool, type DocumentPoolStats } from './pool';
export type { ConvertOptions, DocumentConversion, DocumentFailure, DocumentFailureCode, DocumentFormat, DocumentInfo, DocumentLimits, DocumentOutput, DocumentResult } from './types';
