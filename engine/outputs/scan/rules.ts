/**
 * How node-html-parser 9 (the parser every output uses) tokenises and nests a page, as data: the
 * pre-scan (./index.ts) follows these rules to know, before the parser builds anything, how many nodes
 * it will make, how deep its stack grows and what it leaves open at the end. They are the library's
 * own tables and character classes (with the options dom.ts parses with); a test compares the pre-scan's
 * counts with the parser's on sample and random pages, so a new version that changes them is caught.
 */

/** `\s` of a JavaScript regular expression. */
export function isSpace(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  if (code < 0xa0) return false;
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/** The first character of a tag name: an ASCII letter. */
export const isNameStart = (code: number): boolean => (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);

/**
 * The rest of a tag name, as the parser's pattern has it. Its class holds `\x37F-\u1FFF`, which reads
 * as `7` and the range `F`..`\u1FFF`: every ASCII character from `F` to `~` (brackets, braces, the
 * backtick and `|` included) and everything up to U+1FFF is a name character.
 */
export function isNameChar(code: number): boolean {
  if (code < 0x40) return code === 0x2d || code === 0x2e || (code >= 0x30 && code <= 0x3a);
  if (code <= 0x1fff) return true;
  return (
    code === 0x200c ||
    code === 0x200d ||
    code === 0x203f ||
    code === 0x2040 ||
    (code >= 0x2070 && code <= 0x218f) ||
    (code >= 0x2c00 && code <= 0x2fef) ||
    (code >= 0x3001 && code <= 0xd7ff) ||
    (code >= 0xf900 && code <= 0xfdcf) ||
    (code >= 0xfdf0 && code <= 0xfffd)
  );
}

/** Elements without content: opened and closed by their start tag. */
export const VOID_TAGS: ReadonlySet<string> = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr']);

/** Elements whose content is raw text up to their end tag (dom.ts's `blockTextElements`). */
export const RAW_TEXT_TAGS: ReadonlySet<string> = new Set(['script', 'style', 'noscript', 'textarea']);

const table = (entries: Record<string, string[]>): ReadonlyMap<string, ReadonlySet<string>> => new Map(Object.entries(entries).map(([tag, tags]) => [tag, new Set(tags)]));

/** An open element (the key) that the start tag of one of the values closes first. */
export const CLOSED_BY_OPENING = table({
  li: ['li'],
  p: ['p', 'div'],
  b: ['div'],
  td: ['td', 'th', 'tr', 'tbody', 'tfoot'],
  th: ['td', 'th', 'tr', 'tbody', 'tfoot'],
  tr: ['tr', 'tbody', 'tfoot'],
  thead: ['tbody', 'tfoot'],
  tbody: ['tbody', 'tfoot'],
  h1: ['h1'],
  h2: ['h2'],
  h3: ['h3'],
  h4: ['h4'],
  h5: ['h5'],
  h6: ['h6'],
  dt: ['dt', 'dd'],
  dd: ['dt', 'dd'],
});

/** An open element (the key) that the end tag of one of the values closes on its way. */
export const CLOSED_BY_CLOSING = table({
  li: ['ul', 'ol'],
  a: ['div'],
  b: ['div'],
  i: ['div'],
  p: ['div'],
  td: ['tr', 'table', 'thead', 'tbody', 'tfoot'],
  th: ['tr', 'table', 'thead', 'tbody', 'tfoot'],
  tr: ['table', 'thead', 'tbody', 'tfoot'],
  tbody: ['table'],
  tfoot: ['table'],
  dt: ['dl', 'body', 'html'],
  dd: ['dl', 'body', 'html'],
});

/** An open `<p>` is closed by the end tag of its parent, except for these parents. */
export const P_CLOSED_BY_PARENT_EXCEPT: ReadonlySet<string> = new Set(['a', 'audio', 'del', 'ins', 'map', 'noscript', 'video']);

/**
 * Whether a start tag's attributes end with an unquoted value (`<a href=/x/>`): the parser then reads
 * the closing slash as part of the value, not as a self-closing tag. A linear reading of its pattern
 * `(?:^|\s)[^\s"'<>=\/]+\s*=\s*[^\s"'<>`]+$` over `text` from `from` to `to`.
 */
export function endsWithUnquotedValue(text: string, from: number, to: number): boolean {
  // The value is a suffix of the run of value characters that ends the attributes.
  let start = to;
  while (start > from && isValueChar(text.charCodeAt(start - 1))) start--;
  if (start === to) return false;
  // `name=value` inside the run: `=` is a value character, so the value starts after the run's first `=`,
  // and the name is what precedes it in the run (or, when the run starts with it, what precedes the run).
  const equals = text.indexOf('=', start);
  if (equals >= 0 && equals < to - 1) {
    if (equals === start ? nameBefore(text, from, equals) : isNameRun(text, from, start, equals)) return true;
  }
  // `name = value`: the whole run is the value, after spaces and an `=`.
  let at = start;
  while (at > from && isSpace(text.charCodeAt(at - 1))) at--;
  if (at === start || at === from || text.charCodeAt(at - 1) !== 0x3d) return false;
  return nameBefore(text, from, at - 1);
}

const isNameCharOfAttribute = (code: number): boolean =>
  !isSpace(code) && code !== 0x22 && code !== 0x27 && code !== 0x3c && code !== 0x3e && code !== 0x3d && code !== 0x2f;
const isValueChar = (code: number): boolean => !isSpace(code) && code !== 0x22 && code !== 0x27 && code !== 0x3c && code !== 0x3e && code !== 0x60;

/** An attribute name (after spaces) right before the `=` at `equals`. */
function nameBefore(text: string, from: number, equals: number): boolean {
  let end = equals;
  while (end > from && isSpace(text.charCodeAt(end - 1))) end--;
  let start = end;
  while (start > from && isNameCharOfAttribute(text.charCodeAt(start - 1))) start--;
  return start < end && (start === from || isSpace(text.charCodeAt(start - 1)));
}

/** `start..end` is all attribute-name characters, at the start of the attributes or after a space. */
function isNameRun(text: string, from: number, start: number, end: number): boolean {
  if (start !== from && !isSpace(text.charCodeAt(start - 1))) return false;
  for (let at = start; at < end; at++) if (!isNameCharOfAttribute(text.charCodeAt(at))) return false;
  return start < end;
}
