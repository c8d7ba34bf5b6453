/**
 * HTML to plain text for `response_type=plaintext`, close to what a browser's `innerText` gives:
 * blocks on their own lines (paragraph-like blocks separated by a blank line), table cells separated
 * by tabs, `<br>` as a newline, `<pre>` kept as is, whitespace collapsed everywhere else, and no text
 * from scripts, styles, form controls or hidden elements.
 */
import { type HTMLElement, BLOCK_TAGS, MEDIA_TAGS, NOISE_TAGS, NodeType, documentParts, isElement, isHidden, parseHtml, tagOf } from './dom';
import { codeText } from './markdown/code';

/** Blocks followed and preceded by a blank line; other blocks only start a new line. */
const SPACED_BLOCKS: ReadonlySet<string> = new Set([
  'p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'pre', 'blockquote', 'table', 'dl', 'figure', 'hr', 'details',
]);

class TextWriter {
  private readonly parts: string[] = [];
  /** Last character written; reading it from a growing string would copy the string each time. */
  private last = '';
  private breaks = 0;
  private space = false;
  private tab = false;

  /** Normal text: whitespace collapses with its neighbours. */
  text(raw: string): void {
    // Zero-width spaces are layout hints (permalink anchors use them as text); readers never see them.
    const text = raw.replace(/[\u200b\u2060]/g, '').replace(/[\s\u00a0]+/g, ' ');
    if (text === '') return;
    const core = text.trim();
    if (core === '') {
      this.space = this.last !== '';
      return;
    }
    this.emit(core, text.startsWith(' '));
    this.space = text.endsWith(' ');
  }

  /** Preformatted text, written as is. */
  raw(text: string): void {
    if (text !== '') this.emit(text, false);
  }

  /** Asks for at least `count` line breaks before the next text (none at the very start). */
  lineBreak(count: number): void {
    if (this.last !== '') this.breaks = Math.max(this.breaks, count);
    this.space = false;
  }

  /** A `<br>`: always one more newline, even repeated. */
  hardBreak(): void {
    this.flushBreaks();
    this.write('\n');
    this.space = false;
  }

  cellSeparator(): void {
    this.tab = true;
  }

  finish(): string {
    // Each run of blanks is matched once, whole (`[ \t]+\n` would rescan a long run that ends without a newline from each of its characters).
    return this.parts.join('').replace(/[ \t]+(\n)?/g, (blanks: string, newline?: string) => newline ?? blanks).replace(/\n{3,}/g, '\n\n').trim();
  }

  private write(text: string): void {
    this.parts.push(text);
    this.last = text[text.length - 1] ?? this.last;
  }

  private flushBreaks(): void {
    if (this.breaks > 0) this.write('\n'.repeat(this.breaks));
    this.breaks = 0;
  }

  private emit(text: string, leadingSpace: boolean): void {
    const atLineStart = this.last === '' || this.last === '\n';
    if (this.breaks > 0) this.flushBreaks();
    else if (this.tab && !atLineStart) this.write('\t');
    else if ((leadingSpace || this.space) && this.last !== '' && !/\s/.test(this.last)) this.write(' ');
    this.tab = false;
    this.space = false;
    this.write(text);
  }
}

function walk(parent: HTMLElement, writer: TextWriter): void {
  for (const child of parent.childNodes) {
    if (child.nodeType === NodeType.TEXT_NODE) {
      writer.text(child.text);
      continue;
    }
    if (!isElement(child)) continue;
    const tag = tagOf(child);
    if (NOISE_TAGS.has(tag) || MEDIA_TAGS.has(tag) || isHidden(child)) continue;
    if (tag === 'br') {
      writer.hardBreak();
      continue;
    }
    if (tag === 'td' || tag === 'th') writer.cellSeparator();
    const block = BLOCK_TAGS.has(tag) && tag !== 'td' && tag !== 'th';
    const breaks = SPACED_BLOCKS.has(tag) ? 2 : 1;
    if (block) writer.lineBreak(breaks);
    if (tag === 'pre' || tag === 'xmp' || tag === 'listing') writer.raw(codeText(child).replace(/^\r?\n/, '').trimEnd());
    else walk(child, writer);
    if (block) writer.lineBreak(breaks);
  }
}

export function toPlainText(html: string): string {
  return plainTextOf(documentParts(parseHtml(html)).body);
}

/** The text of one element of a parsed page (the main content, for instance). */
export function plainTextOf(el: HTMLElement): string {
  const writer = new TextWriter();
  walk(el, writer);
  return writer.finish();
}
