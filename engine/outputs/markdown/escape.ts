/**
 * Markdown escaping kept minimal: page text must not turn into markup by accident, yet stay readable
 * (`snake_case` stays as is, a price like `+44` is not escaped).
 */

const isWordChar = (ch: string | undefined): boolean => ch !== undefined && /[\p{L}\p{N}]/u.test(ch);

/** Escapes characters that would start inline markup inside running text. */
export function escapeText(text: string): string {
  let out = text.replace(/[\\`*[\]]/g, '\\$&').replace(/<(?=[A-Za-z/!?])/g, '\\<');
  if (out.includes('_')) {
    // Intraword underscores never form emphasis in CommonMark, so only the ones at word edges need a backslash.
    out = out.replace(/_/g, (match, offset: number, whole: string) =>
      isWordChar(whole[offset - 1]) && isWordChar(whole[offset + 1]) ? match : '\\_',
    );
  }
  return out;
}

/** Escapes what a line start would read as a block marker (heading, list item, quote, rule, fence). */
export function escapeLineStart(line: string): string {
  if (!/^[-+*#>=~\d]/.test(line)) return line;
  return line
    .replace(/^([-+*])(?=\s|$)/, '\\$1')
    .replace(/^(\d{1,9})([.)])(?=\s|$)/, '$1\\$2')
    .replace(/^(#{1,6})(?=\s|$)/, '\\$1')
    .replace(/^>/, '\\>')
    .replace(/^(-+|=+)(?=\s*$)/, '\\$1')
    .replace(/^~~~/, '\\~~~');
}

/**
 * The whitespace a text starts with, the text between, and the whitespace it ends with (all of it
 * lead when it is only whitespace). Trimmed by hand: `^(\s*)([\s\S]*?)(\s*)$` is quadratic in a long
 * run of inner whitespace.
 */
export function edges(inner: string): [lead: string, text: string, trail: string] {
  const start = inner.length - inner.trimStart().length;
  if (start === inner.length) return [inner, '', ''];
  const end = inner.trimEnd().length;
  return [inner.slice(0, start), inner.slice(start, end), inner.slice(end)];
}

/** Puts emphasis markers around the text while keeping its edge whitespace outside them. */
export function wrap(inner: string, marker: string): string {
  const [lead, text, trail] = edges(inner);
  if (!text) return inner;
  return `${lead}${marker}${text}${marker}${trail}`;
}

/** A code span whose backtick fence is longer than any backtick run inside it. */
export function codeSpan(text: string): string {
  const collapsed = text.replace(/[\s\u00a0]+/g, ' ');
  const match = /^( ?)(.*?)( ?)$/.exec(collapsed);
  const body = match?.[2] ?? '';
  if (!body) return collapsed;
  let fence = '`';
  while (body.includes(fence)) fence += '`';
  const pad = body.startsWith('`') || body.endsWith('`') ? ' ' : '';
  return `${match?.[1] ?? ''}${fence}${pad}${body}${pad}${fence}${match?.[3] ?? ''}`;
}

/** A URL usable as a link destination without angle brackets. */
const URL_ESCAPES: ReadonlyMap<string, string> = new Map([['(', '%28'], [')', '%29'], [' ', '%20']]);
export const markdownUrl = (url: string): string => url.replace(/[() ]/g, (ch) => URL_ESCAPES.get(ch) ?? ch);

/** Link or image label text: brackets must stay balanced-safe. */
export const escapeLabel = (text: string): string => text.replace(/[\\[\]]/g, '\\$&');
