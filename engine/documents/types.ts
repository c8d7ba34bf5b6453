/** The document module's public shapes: what a conversion is asked for and what it answers. */

export type DocumentFormat = 'pdf' | 'docx' | 'pptx' | 'xlsx' | 'odt' | 'ods' | 'odp' | 'csv';

/** `html`: the document's structure as one HTML document (crawl pages, the JSON envelope, HTML-reading outputs). */
export type DocumentOutput = 'markdown' | 'plaintext' | 'html';

export interface ConvertOptions {
  /** The target's or the caller's Content-Type, parameters allowed (`application/pdf; qs=1`). */
  contentType?: string;
  /** A file name from Content-Disposition or the URL's last segment: it decides for application/octet-stream. */
  fileName?: string;
  /** Which text to build; the `document` metadata comes with either. Default markdown. */
  output?: DocumentOutput;
  /** A second rendering of the same reading, answered as `also` (one parse for two shapes). */
  also?: DocumentOutput;
  /** Page boundaries in the text (`<!-- page N -->` in Markdown, a form feed in plain text). Default true. */
  pageMarkers?: boolean;
  /** PPTX and ODP: each slide's speaker notes after its content. Default false. */
  speakerNotes?: boolean;
}

/** The `document` object of a JSON answer: what the file states about itself, and what could not be read. */
export interface DocumentInfo {
  format: DocumentFormat;
  /** Pages (PDF), slides (PPTX/ODP), sheets (XLSX/ODS); for DOCX/ODT the count the file states, else null. */
  pages: number | null;
  title: string | null;
  author: string | null;
  /** ISO 8601, only where the file states it. */
  created: string | null;
  modified: string | null;
  /** 1-based numbers of PDF pages that have content but no text layer (scans): reported, not returned as text. */
  pagesWithoutText: number[];
}

export interface DocumentResult {
  ok: true;
  format: DocumentFormat;
  output: DocumentOutput;
  /** Markdown, plain text or HTML, as asked. */
  text: string;
  /** The second rendering, when `also` asked for one. */
  also?: string;
  document: DocumentInfo;
}

/**
 * Stable codes a surface maps to a 4xx problem document (see DOCUMENT_FAILURES for the status):
 * - document_unsupported: not a format this module reads (legacy .doc/.xls, an unknown zip, ...);
 * - document_unreadable: truncated, corrupt, or not what it claims; XML with a DTD (external entities);
 * - document_encrypted: needs a password (PDF user password, encrypted OOXML);
 * - document_too_large: over a byte, inflated-size, entry-count, page or memory cap;
 * - document_too_complex: over the time cap, or nesting deeper than the cap;
 * - documents_busy: every worker busy and the queue full (the service's fault, not the caller's: 503).
 */
export type DocumentFailureCode =
  | 'document_unsupported'
  | 'document_unreadable'
  | 'document_encrypted'
  | 'document_too_large'
  | 'document_too_complex'
  | 'documents_busy';

export interface DocumentFailure {
  ok: false;
  code: DocumentFailureCode;
  /** A short machine-readable reason under the code (`zip_inflated_size`, `pdf_password`, `timeout`, ...), for logs and tests. */
  reason: string;
  /** One sentence a caller can read; never internals such as stack traces or paths. */
  detail: string;
}

export type DocumentConversion = DocumentResult | DocumentFailure;

/** Caps for one conversion. Each is checked while the work happens, not from what the file declares. */
export interface DocumentLimits {
  /** Bytes of the file itself. */
  maxBytes: number;
  /** Sum of the inflated sizes of a zip's entries (OOXML, ODF), counted while inflating. */
  maxInflatedBytes: number;
  /** Entries in a zip. */
  maxEntries: number;
  /** PDF pages, slides, sheets. */
  maxPages: number;
  /** Cells of all sheets (XLSX, ODS, CSV). */
  maxCells: number;
  /** Element nesting in XML parts and HTML. */
  maxDepth: number;
  /** Characters of the text answered. */
  maxTextChars: number;
}
