/**
 * Is this answer a document, and of which format? Cheap and bounded, so a surface can ask on its own
 * event loop: it reads the Content-Type, the file name, the first bytes and, for zips, the names in
 * the central directory (never inflating anything). The worker checks the rest when it converts.
 */
import type { DocumentFormat } from './types';

const BY_MIME: Record<string, DocumentFormat> = {
  'application/pdf': 'pdf',
  'application/x-pdf': 'pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'pptx',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'application/vnd.oasis.opendocument.text': 'odt',
  'application/vnd.oasis.opendocument.spreadsheet': 'ods',
  'application/vnd.oasis.opendocument.presentation': 'odp',
  'text/csv': 'csv',
  'application/csv': 'csv',
};

const BY_EXTENSION: Record<string, DocumentFormat> = {
  pdf: 'pdf',
  docx: 'docx',
  pptx: 'pptx',
  xlsx: 'xlsx',
  odt: 'odt',
  ods: 'ods',
  odp: 'odp',
  csv: 'csv',
};

/** A table's own entry only: a type or extension such as `constructor` must not reach Object's prototype. */
const own = (table: Record<string, DocumentFormat>, key: string): DocumentFormat | undefined => (Object.hasOwn(table, key) ? table[key] : undefined);

/** Types servers send for "a file" without saying which: the bytes or the file name decide. */
const GENERIC = new Set(['', 'application/octet-stream', 'binary/octet-stream', 'application/x-download', 'application/force-download', 'application/download', 'application/zip', 'application/x-zip-compressed', 'application/unknown']);

export function mimeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
}

export function extensionOf(fileName: string | undefined): string {
  const name = (fileName ?? '').split(/[?#]/, 1)[0]!;
  const dot = name.lastIndexOf('.');
  return dot < 0 || dot < name.lastIndexOf('/') ? '' : name.slice(dot + 1).toLowerCase();
}

/** The document format a Content-Type names, or null (generic types such as application/octet-stream name none). */
export function documentFormatOfType(contentType: string | undefined): DocumentFormat | null {
  return own(BY_MIME, mimeOf(contentType)) ?? null;
}

/** The document format a file name's extension names (`report.PDF`, `/files/q3.xlsx?v=2`), or null. */
export function documentFormatOfName(fileName: string | undefined): DocumentFormat | null {
  return own(BY_EXTENSION, extensionOf(fileName)) ?? null;
}

const LEGACY_TYPES = new Set(['application/msword', 'application/vnd.ms-excel', 'application/vnd.ms-powerpoint']);

/**
 * A legacy binary Office file (.doc, .xls, .ppt) by its type or its bytes: a document the service
 * recognises and does not read (conversions answer `document_unsupported`).
 */
export function isLegacyOffice(bytes: Uint8Array, contentType: string | undefined): boolean {
  return LEGACY_TYPES.has(mimeOf(contentType)) || (isCompoundFile(bytes) && detectDocument(bytes, contentType ? { contentType } : {}) === null);
}

/** The Content-Type of a format, for answers that carry a document's own bytes without a usable type. */
export function mimeOfFormat(format: DocumentFormat): string {
  return Object.keys(BY_MIME).find((mime) => BY_MIME[mime] === format) ?? 'application/octet-stream';
}

/**
 * The document format of an answer, or null when it is not one of ours (a page, an image, a legacy
 * binary Office file). Bytes win over a generic or wrong type: a PDF served as text/html is a PDF.
 */
export function detectDocument(bytes: Uint8Array, hints: { contentType?: string; fileName?: string } = {}): DocumentFormat | null {
  const mime = mimeOf(hints.contentType);
  const sniffed = sniff(bytes);
  // A page declared as HTML that merely mentions `%PDF-` near its top is a page: a PDF served as
  // text/html starts with its header.
  if (sniffed && !(sniffed === 'pdf' && HTML_TYPES.has(mime) && !startsWithPdf(bytes))) return sniffed;
  const declared = own(BY_MIME, mime);
  if (declared) return declared;
  if (GENERIC.has(mime) || mime === 'text/plain') {
    const byName = own(BY_EXTENSION, extensionOf(hints.fileName));
    // An encrypted OOXML file is a compound file, not a zip: its name still says what it is.
    if (byName && (byName === 'csv' || isCompoundFile(bytes) || byName === 'pdf' || isZip(bytes))) return byName;
  }
  return null;
}

export function isZip(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04;
}

/** The OLE compound file of legacy Office formats and of encrypted OOXML. */
export function isCompoundFile(bytes: Uint8Array): boolean {
  const magic = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];
  return bytes.length >= 8 && magic.every((byte, i) => bytes[i] === byte);
}

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml', 'text/xml', 'application/xml']);

/** `%PDF-` first, after a byte-order mark or white space at most. */
function startsWithPdf(bytes: Uint8Array): boolean {
  let at = 0;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) at = 3;
  while (at < bytes.length && at < 64 && (bytes[at] === 0x20 || bytes[at] === 0x0a || bytes[at] === 0x0d || bytes[at] === 0x09)) at++;
  return bytes[at] === 0x25 && bytes[at + 1] === 0x50 && bytes[at + 2] === 0x44 && bytes[at + 3] === 0x46 && bytes[at + 4] === 0x2d;
}

/** `%PDF-` within the first KiB: the PDF standard lets readers accept junk before the header. */
export function isPdf(bytes: Uint8Array): boolean {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 1024));
  return head.indexOf('%PDF-') >= 0;
}

function sniff(bytes: Uint8Array): DocumentFormat | null {
  if (isPdf(bytes)) return 'pdf';
  if (!isZip(bytes)) return null;
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const odf = odfMimetype(buffer);
  if (odf) return odf;
  const names = centralNames(buffer, 4096);
  if (names.has('word/document.xml')) return 'docx';
  if (names.has('ppt/presentation.xml')) return 'pptx';
  if (names.has('xl/workbook.xml')) return 'xlsx';
  return null;
}

/** ODF puts a stored `mimetype` entry first, so its type can be read at a fixed offset. */
function odfMimetype(bytes: Buffer): DocumentFormat | null {
  if (bytes.length < 38 || bytes.readUInt16LE(8) !== 0) return null;
  const nameLength = bytes.readUInt16LE(26);
  if (bytes.toString('latin1', 30, 30 + nameLength) !== 'mimetype') return null;
  const start = 30 + nameLength + bytes.readUInt16LE(28);
  const size = bytes.readUInt32LE(18);
  if (size > 100 || start + size > bytes.length) return null;
  return own(BY_MIME, bytes.toString('latin1', start, start + size).trim()) ?? null;
}

/** Entry names from the central directory, at most `limit` of them; an unreadable directory gives none. */
function centralNames(bytes: Buffer, limit: number): Set<string> {
  const names = new Set<string>();
  const lowest = Math.max(0, bytes.length - 22 - 0xffff);
  let eocd = -1;
  for (let at = bytes.length - 22; at >= lowest; at--) {
    if (bytes.readUInt32LE(at) === 0x06054b50) {
      eocd = at;
      break;
    }
  }
  if (eocd < 0) return names;
  let at = bytes.readUInt32LE(eocd + 16);
  const count = Math.min(bytes.readUInt16LE(eocd + 10), limit);
  for (let i = 0; i < count; i++) {
    if (at + 46 > bytes.length || bytes.readUInt32LE(at) !== 0x02014b50) break;
    const nameLength = bytes.readUInt16LE(at + 28);
    names.add(bytes.toString('utf8', at + 46, Math.min(bytes.length, at + 46 + nameLength)));
    at += 46 + nameLength + bytes.readUInt16LE(at + 30) + bytes.readUInt16LE(at + 32);
  }
  return names;
}

/**
 * The file name of a Content-Disposition header: RFC 6266's `filename*` (RFC 8187 encoded) first,
 * then `filename`. Only the last path segment is kept.
 */
export function fileNameFromDisposition(header: string | undefined): string | undefined {
  if (!header || header.length > 2048) return undefined;
  const extended = /filename\*\s*=\s*([^;]+)/i.exec(header);
  if (extended) {
    const value = extended[1]!.trim();
    const quote = value.indexOf("'");
    const second = quote >= 0 ? value.indexOf("'", quote + 1) : -1;
    try {
      const decoded = decodeURIComponent(second >= 0 ? value.slice(second + 1) : value);
      if (decoded) return lastSegment(decoded);
    } catch {
      // A malformed escape: fall back to the plain parameter.
    }
  }
  const plain = /filename\s*=\s*(?:"([^"]*)"|([^;\s]+))/i.exec(header);
  const name = plain?.[1] ?? plain?.[2];
  return name ? lastSegment(name) : undefined;
}

const lastSegment = (name: string): string => name.slice(Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\')) + 1);
