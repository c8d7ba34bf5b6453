/**
 * Reading a file the caller sends (POST /v1/documents): a raw body with its own Content-Type (and a
 * file name from Content-Disposition or `file_name`), or multipart/form-data whose first file part is
 * the document. Read as it arrives and refused past `maxBytes` at once (413 `document_too_large`,
 * the setting named), without reading the rest; multipart is parsed as a stream (busboy), linear in
 * the bytes, with caps on parts, fields and header pairs.
 */
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { problem, type ApiError } from '../../base/errors';
import { fileNameFromDisposition } from '../../engine';

export interface Upload {
  bytes: Buffer;
  contentType?: string;
  fileName?: string;
}

export interface UploadHeaders {
  contentType?: string;
  contentLength?: number;
  /** The request's Content-Disposition, for a raw body's file name. */
  disposition?: string;
  /** The `file_name` query parameter, which wins over Content-Disposition. */
  fileName?: string;
}

/** Room for a multipart body's boundaries, part headers and small fields beside the file. */
const MULTIPART_OVERHEAD = 64 * 1024;

export const uploadTooLarge = (maxBytes: number): ApiError =>
  problem('document_too_large', `A document is at most ${maxBytes} bytes (DOCUMENT_MAX_BYTES).`, {
    members: { reason: 'bytes', limit: 'DOCUMENT_MAX_BYTES', allowed: maxBytes },
    headers: { Connection: 'close' },
  });

const empty = (): ApiError => problem('invalid_request', 'The request body is empty: send the document as the body, or as the file part of multipart/form-data.');

const isMultipart = (contentType: string | undefined): boolean => (contentType ?? '').trimStart().toLowerCase().startsWith('multipart/form-data');

export async function readUpload(chunks: AsyncIterable<Buffer>, headers: UploadHeaders, maxBytes: number): Promise<Upload> {
  const multipart = isMultipart(headers.contentType);
  if ((headers.contentLength ?? 0) > maxBytes + (multipart ? MULTIPART_OVERHEAD : 0)) throw uploadTooLarge(maxBytes);
  const upload = multipart ? await readMultipart(chunks, headers.contentType ?? '', maxBytes) : await readRaw(chunks, headers, maxBytes);
  if (upload.bytes.length === 0) throw empty();
  return upload;
}

async function readRaw(chunks: AsyncIterable<Buffer>, headers: UploadHeaders, maxBytes: number): Promise<Upload> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of chunks) {
    size += chunk.length;
    // Leaving the loop leaves the rest of the body unread (the connection closes after the answer).
    if (size > maxBytes) throw uploadTooLarge(maxBytes);
    parts.push(chunk);
  }
  const fileName = headers.fileName ?? fileNameFromDisposition(headers.disposition);
  return { bytes: Buffer.concat(parts, size), ...(headers.contentType ? { contentType: headers.contentType } : {}), ...(fileName ? { fileName } : {}) };
}

async function readMultipart(chunks: AsyncIterable<Buffer>, contentType: string, maxBytes: number): Promise<Upload> {
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: { 'content-type': contentType }, limits: { files: 1, fileSize: maxBytes, parts: 50, fields: 40, fieldSize: 16 * 1024, headerPairs: 50 } });
  } catch {
    throw problem('invalid_request', 'A multipart/form-data body needs its boundary in the Content-Type.');
  }
  let failure: ApiError | undefined;
  let file: Promise<Upload> | undefined;
  parser.on('file', (_name: string, stream: Readable, info: busboy.FileInfo) => {
    if (file) return void stream.resume();
    // Past the cap the read stops at once, not at the end of the body.
    stream.once('limit', () => (failure ??= uploadTooLarge(maxBytes)));
    file = collectFile(stream, info);
  });
  parser.on('error', () => {
    failure ??= problem('invalid_request', 'The multipart/form-data body could not be read.');
  });
  const done = new Promise<void>((resolve) => parser.once('close', resolve).once('finish', resolve).once('error', () => resolve()));
  for await (const chunk of chunks) {
    if (failure) break;
    if (!parser.write(chunk)) await Promise.race([once(parser, 'drain'), done]);
  }
  if (failure) {
    parser.destroy();
    throw failure;
  }
  parser.end();
  await done;
  const read = file ? await file : undefined;
  if (failure) throw failure;
  if (!read) throw problem('invalid_request', 'The multipart/form-data body has no file part: send the document as a file field (for example `file`).');
  return read;
}

async function collectFile(stream: Readable, info: busboy.FileInfo): Promise<Upload> {
  const parts: Buffer[] = [];
  // Ends with an error when the parser is destroyed mid-file (a cap passed, a malformed body): the caller answers that.
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) parts.push(chunk);
  } catch {
    return { bytes: Buffer.alloc(0) };
  }
  const type = info.mimeType && info.mimeType !== 'application/octet-stream' ? info.mimeType : undefined;
  return { bytes: Buffer.concat(parts), ...(type ? { contentType: type } : {}), ...(info.filename ? { fileName: info.filename } : {}) };
}
