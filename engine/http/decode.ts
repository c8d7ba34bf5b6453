/**
 * Undoes Content-Encoding (gzip, deflate, br, in the order they were applied) with a cap on the decoded
 * size, so a small compressed bomb cannot grow past the limit: zlib stops at `maxOutputLength`.
 */
import zlib from 'node:zlib';
import { promisify } from 'node:util';

const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);
const inflateRaw = promisify(zlib.inflateRaw);
const brotli = promisify(zlib.brotliDecompress);

export type DecodeResult =
  | { ok: true; body: Buffer; decoded: boolean }
  | { ok: false; kind: 'too_large' | 'protocol_error'; detail: string };

const tooLarge = (error: unknown): boolean => (error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE';

async function decodeOne(coding: string, body: Buffer, maxOutputLength: number): Promise<Buffer | undefined> {
  const options = { maxOutputLength, finishFlush: zlib.constants.Z_SYNC_FLUSH };
  switch (coding) {
    case 'gzip':
    case 'x-gzip':
      return gunzip(body, options);
    case 'deflate':
      // Servers send both zlib-wrapped and raw deflate under this name; the first byte tells them apart.
      return (body[0] ?? 0) % 16 === 8 && ((body[0] ?? 0) * 256 + (body[1] ?? 0)) % 31 === 0
        ? inflate(body, options)
        : inflateRaw(body, options);
    case 'br':
      return brotli(body, { maxOutputLength });
    default:
      return undefined;
  }
}

/**
 * `contentEncoding` is the header value (`gzip`, `gzip, br`). An encoding the engine does not know
 * leaves the body as received (`decoded: false`), so the caller still sees what the target sent.
 */
export async function decodeBody(body: Buffer, contentEncoding: string | undefined, maxBytes: number): Promise<DecodeResult> {
  const codings = (contentEncoding ?? '')
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  if (codings.length === 0 || body.length === 0) return { ok: true, body, decoded: false };
  let current = body;
  for (const coding of codings.reverse()) {
    try {
      const next = await decodeOne(coding, current, maxBytes);
      if (next === undefined) return { ok: true, body, decoded: false };
      current = next;
    } catch (error) {
      if (tooLarge(error)) return { ok: false, kind: 'too_large', detail: `the decoded response is larger than ${maxBytes} bytes` };
      return { ok: false, kind: 'protocol_error', detail: `the ${coding} body could not be decoded` };
    }
  }
  return { ok: true, body: current, decoded: true };
}
