/**
 * Response bytes to text. The charset comes from, in order: a byte-order mark, the Content-Type
 * header, a `<meta charset>` or `<meta http-equiv="Content-Type">` in the first bytes of the page,
 * else UTF-8. Labels follow the web's rules (e.g. `iso-8859-1` is read as windows-1252).
 */
import iconv from 'iconv-lite';

/** How far into the page a `<meta>` charset is looked for (browsers use 1024 bytes; some pages put it later). */
const SNIFF_BYTES = 4096;

/** Labels browsers read differently from their literal meaning, after the WHATWG Encoding standard. */
const LABEL_ALIASES: ReadonlyMap<string, string> = new Map([
  ['iso-8859-1', 'windows-1252'], ['latin1', 'windows-1252'], ['iso8859-1', 'windows-1252'], ['us-ascii', 'windows-1252'],
  ['ascii', 'windows-1252'], ['x-cp1252', 'windows-1252'], ['iso-8859-9', 'windows-1254'], ['tis-620', 'windows-874'],
  ['gb2312', 'gbk'], ['x-gbk', 'gbk'], ['x-sjis', 'shift_jis'], ['ms_kanji', 'shift_jis'], ['x-euc-jp', 'euc-jp'], ['utf8', 'utf-8'],
  ['unicode-1-1-utf-8', 'utf-8'],
]);

function normaliseLabel(label: string | undefined): string | undefined {
  const clean = label?.trim().replace(/^["']|["']$/g, '').toLowerCase();
  if (!clean) return undefined;
  const name = LABEL_ALIASES.get(clean) ?? clean;
  return iconv.encodingExists(name) ? name : undefined;
}

function fromBom(body: Buffer): string | undefined {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return 'utf-8';
  if (body[0] === 0xff && body[1] === 0xfe) return 'utf-16le';
  if (body[0] === 0xfe && body[1] === 0xff) return 'utf-16be';
  return undefined;
}

const fromContentType = (contentType: string | undefined): string | undefined =>
  normaliseLabel(/charset\s*=\s*("[^"]*"|'[^']*'|[^;,\s]+)/i.exec(contentType ?? '')?.[1]);

function fromMeta(body: Buffer): string | undefined {
  const head = body.subarray(0, SNIFF_BYTES).toString('latin1');
  for (const tag of head.match(/<meta\b[^>]*>/gi) ?? []) {
    const label = normaliseLabel(/charset\s*=\s*["']?\s*([^"'\s;/>]+)/i.exec(tag)?.[1]);
    // A page readable as ASCII cannot really be UTF-16; browsers then use UTF-8.
    if (label) return label.startsWith('utf-16') ? 'utf-8' : label;
  }
  return undefined;
}

/** The charset `decodeHtml` will use for these bytes. */
export const detectCharset = (body: Buffer, contentType?: string): string =>
  fromBom(body) ?? fromContentType(contentType) ?? fromMeta(body) ?? 'utf-8';

/** The page as text; a byte-order mark is removed while decoding. */
export const decodeHtml = (body: Buffer, contentType?: string): string => iconv.decode(body, detectCharset(body, contentType));

/**
 * Whether an answer is a page the service reads as HTML (its links, Markdown, plain text, Extract):
 * a browser rendered it, its Content-Type names HTML or XML, or it has none and starts with markup.
 * The one place this is decided.
 */
export function isHtml(answer: { contentType?: string; body?: Buffer | string; rendered?: boolean }): boolean {
  if (answer.rendered) return true;
  if (answer.contentType) return /html|xml/i.test(answer.contentType);
  const { body } = answer;
  const head = typeof body === 'string' ? body.slice(0, 512) : (body?.subarray(0, 512).toString('latin1') ?? '');
  return head.trimStart().startsWith('<');
}
