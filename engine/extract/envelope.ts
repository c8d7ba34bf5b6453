/**
 * The `{"parsed": ..., "html": "..."}` envelope as bytes. The page is most of it (a 200 KB page next to
 * a few hundred bytes of fields), and serialising it the obvious way costs more than extracting: the
 * bytes are decoded to a string, JSON.stringify escapes it, and the result is encoded to UTF-8 again.
 * When the page's bytes are valid UTF-8 (the charset the page was read with), the string JSON needs
 * is those bytes with `"`, `\` and control characters escaped, exactly as JSON.stringify writes them;
 * so the envelope is built from the bytes directly, byte for byte what JSON.stringify would give.
 */
import { isUtf8 } from 'node:buffer';

/** Extra bytes each byte takes when escaped: 1 for `\"`, `\\` and the short escapes, 5 for `\u00XX`. */
const EXTRA = new Uint8Array(256);
/** The letter of a short escape (`\n`), or 0. */
const SHORT = new Uint8Array(256);
for (let byte = 0; byte < 0x20; byte++) EXTRA[byte] = 5;
for (const [byte, letter] of [
  [0x08, 'b'],
  [0x09, 't'],
  [0x0a, 'n'],
  [0x0c, 'f'],
  [0x0d, 'r'],
  [0x22, '"'],
  [0x5c, '\\'],
] as const) {
  EXTRA[byte] = 1;
  SHORT[byte] = letter.charCodeAt(0);
}
const HEX = '0123456789abcdef';

/**
 * `head`, then `bytes` (valid UTF-8) as a JSON string (quotes included), then `tail`, in one pass:
 * runs without anything to escape are copied whole. The buffer starts an eighth larger than the page
 * (HTML escapes far less) and grows when a page needs more.
 */
function withJsonString(head: Buffer, bytes: Buffer, tail: Buffer): Buffer {
  const length = bytes.length;
  // Locals only (no closure over them): this loop runs once per byte of the page.
  let out: Buffer = Buffer.allocUnsafe(head.length + length + (length >> 3) + 64);
  let at = head.copy(out, 0);
  out[at++] = 0x22;
  let from = 0;
  for (let index = 0; index < length; index++) {
    const byte = bytes[index]!;
    const extra = EXTRA[byte]!;
    if (extra === 0) continue;
    const need = at + (length - from) + extra + 2 + tail.length;
    if (need > out.length) out = grown(out, at, need + (length >> 3));
    at += bytes.copy(out, at, from, index);
    out[at++] = 0x5c;
    const letter = SHORT[byte]!;
    if (letter !== 0) {
      out[at++] = letter;
    } else {
      out[at++] = 0x75; // u00XX
      out[at++] = 0x30;
      out[at++] = 0x30;
      out[at++] = HEX.charCodeAt(byte >> 4);
      out[at++] = HEX.charCodeAt(byte & 15);
    }
    from = index + 1;
  }
  const need = at + (length - from) + 1 + tail.length;
  if (need > out.length) out = grown(out, at, need);
  at += bytes.copy(out, at, from, length);
  out[at++] = 0x22;
  at += tail.copy(out, at);
  return out.subarray(0, at);
}

function grown(out: Buffer, used: number, size: number): Buffer {
  const bigger = Buffer.allocUnsafe(size);
  out.copy(bigger, 0, 0, used);
  return bigger;
}

const UTF8_BOM = [0xef, 0xbb, 0xbf];
const CLOSE = Buffer.from('}');

/**
 * The envelope for a page read as `html`: from the page's own bytes when `html` is their UTF-8
 * decoding (a byte-order mark is dropped, as decoding drops it), else through JSON.stringify.
 */
export function extractEnvelope(parsed: unknown, html: string, source?: { bytes: Buffer; utf8: boolean }): Buffer {
  const head = Buffer.from(`{"parsed":${JSON.stringify(parsed)},"html":`);
  if (source?.utf8) {
    const bom = UTF8_BOM.every((byte, index) => source.bytes[index] === byte) ? 3 : 0;
    const bytes = source.bytes.subarray(bom);
    if (isUtf8(bytes)) return withJsonString(head, bytes, CLOSE);
  }
  return Buffer.concat([head, Buffer.from(JSON.stringify(html)), CLOSE]);
}
