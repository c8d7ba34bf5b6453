/**
 * The parse caps applied to a page's bytes as they are downloaded (engine/http reads the body through
 * it): once the first bytes tell that the answer is HTML and its charset (as decode.ts would decide on
 * the whole body: the byte-order mark, Content-Type, a `<meta>` in the first 4096 bytes), the bytes
 * are decoded as they come and scanned (scan/stream.ts). A page past a cap is refused there, and the
 * rest of it is never read, decoded, copied nor scanned. The scan only answers caps the whole page
 * goes past, so a page it lets through is scanned whole later, exactly as before.
 */
import iconv from 'iconv-lite';
import { isCompoundFile, isPdf, isZip } from '../documents/detect';
import { detectCharset, isHtml } from './decode';
import type { ParseCaps } from './scan';
import { StreamScan, type StreamRefusal } from './scan/stream';

/** Bytes the charset and HTML decisions read (decode.ts's sniff of `<meta>`). */
const HEAD_BYTES = 4096;

export interface PageWatchOptions {
  caps: ParseCaps;
  contentType?: string;
  /** A refusal waits until at least this many bytes are read (what the caller still reads of a refused page: block detection's window). */
  keepBytes?: number;
}

export interface PageWatch {
  /** The next bytes of the body; the cap the page is past, once it is and `keepBytes` are read. */
  push(chunk: Uint8Array): StreamRefusal | undefined;
}

interface Decoder {
  write(bytes: Buffer): string;
}

export function watchPage(options: PageWatchOptions): PageWatch {
  const { caps, contentType } = options;
  const keepBytes = options.keepBytes ?? 0;
  let head: Buffer[] = [];
  let headBytes = 0;
  let read = 0;
  let decoder: Decoder | undefined;
  /** Not HTML: nothing to scan. */
  let off = false;
  let refusal: StreamRefusal | undefined;
  const scan = new StreamScan(caps);

  return {
    push(chunk) {
      read += chunk.byteLength;
      if (!off && !refusal) {
        const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        if (decoder) refusal = scan.push(decoder.write(bytes));
        else {
          head.push(bytes);
          headBytes += bytes.length;
          if (headBytes >= HEAD_BYTES) {
            const first = Buffer.concat(head, headBytes);
            head = [];
            // A document's bytes win over an HTML type (documents/detect.ts): such a body is not scanned here.
            if (!isHtml({ ...(contentType !== undefined ? { contentType } : {}), body: first }) || isPdf(first) || isZip(first) || isCompoundFile(first)) off = true;
            else {
              decoder = iconv.getDecoder(detectCharset(first, contentType)) as Decoder;
              refusal = scan.push(decoder.write(first));
            }
          }
        }
      }
      return refusal && read >= keepBytes ? refusal : undefined;
    },
  };
}
