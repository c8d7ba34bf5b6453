/**
 * One conversion, in the calling thread: detect, read under the caps, render. The pool runs this in
 * its workers; nothing else should call it on a thread that serves requests (`convertDocument` in
 * pool.ts is the API). Never throws: every failure comes back as a typed `DocumentFailure`.
 */
import { readCsv } from './csv';
import { detectDocument, isCompoundFile } from './detect';
import { readDocx } from './docx';
import { documentError, failure, toFailure } from './failures';
import { DEFAULT_DOCUMENT_LIMITS } from './limits';
import { renderModel, type DocumentModel } from './model';
import { readOdf } from './odf';
import { openZip, type ReadContext } from './ooxml';
import { readPdf } from './pdf';
import { readPptx } from './pptx';
import type { ConvertOptions, DocumentConversion, DocumentFormat, DocumentInfo, DocumentLimits } from './types';
import { readXlsx } from './xlsx';

type Reader = (bytes: Buffer, context: ReadContext, format: DocumentFormat) => Promise<{ model: DocumentModel; info: DocumentInfo }>;

const zipped =
  (read: (zip: ReturnType<typeof openZip>, context: ReadContext, format: DocumentFormat) => Promise<{ model: DocumentModel; info: DocumentInfo }>): Reader =>
  (bytes, context, format) => {
    // Encrypted OOXML is an OLE compound file holding the encrypted package.
    if (isCompoundFile(bytes)) {
      if (bytes.indexOf(Buffer.from('EncryptionInfo', 'utf16le')) >= 0) throw documentError('document_encrypted', 'ooxml_encrypted', 'The document is encrypted.');
      throw documentError('document_unsupported', 'legacy_office', 'Legacy binary Office files are not supported; save the file as DOCX, XLSX or PPTX.');
    }
    return read(openZip(bytes, context.limits), context, format);
  };

const READERS: Record<DocumentFormat, Reader> = {
  pdf: (bytes, context) => readPdf(bytes, context),
  docx: zipped((zip, context) => readDocx(zip, context)),
  xlsx: zipped((zip, context) => readXlsx(zip, context)),
  pptx: zipped((zip, context) => readPptx(zip, context)),
  odt: zipped((zip, context, format) => readOdf(zip, context, format)),
  ods: zipped((zip, context, format) => readOdf(zip, context, format)),
  odp: zipped((zip, context, format) => readOdf(zip, context, format)),
  csv: async (bytes, context) => readCsv(bytes, context.limits),
};

export async function convertInProcess(bytes: Uint8Array, options: ConvertOptions = {}, limits: DocumentLimits = DEFAULT_DOCUMENT_LIMITS): Promise<DocumentConversion> {
  try {
    const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (buffer.length > limits.maxBytes) return failure('document_too_large', 'bytes', `The document is larger than ${limits.maxBytes} bytes.`);
    const format = detectDocument(buffer, options);
    if (!format) {
      if (isCompoundFile(buffer)) return failure('document_unsupported', 'legacy_office', 'Legacy binary Office files are not supported; save the file as DOCX, XLSX or PPTX.');
      return failure('document_unsupported', 'format', 'The content is not a document format the service reads (PDF, DOCX, PPTX, XLSX, ODT, ODS, ODP, CSV).');
    }
    const output = options.output ?? 'markdown';
    const { model, info } = await READERS[format](buffer, { limits, speakerNotes: options.speakerNotes ?? false }, format);
    const pageMarkers = options.pageMarkers ?? true;
    const text = renderModel(model, output, pageMarkers);
    const also = options.also && options.also !== output ? renderModel(model, options.also, pageMarkers) : undefined;
    if (text.length + (also?.length ?? 0) > limits.maxTextChars) return failure('document_too_large', 'text', 'The document holds more text than the service returns.');
    return { ok: true, format, output, text, ...(also !== undefined ? { also } : {}), document: info };
  } catch (error) {
    return toFailure(error);
  }
}
