/**
 * The pre-scan: one linear pass over a page, written by hand (no regular expression runs over the page),
 * before node-html-parser builds anything. It follows the parser's own tokenising and nesting rules
 * (./rules.ts) to count the nodes the parse will make and how deep its stack grows, and stops at the
 * first cap. That is what bounds the work of every HTML output: the parser's cost is its nodes, plus,
 * at the end of the page, one move per node for each element left open above it (the parser lifts the
 * content of unclosed elements into their parents one level at a time, which made 20,000 unclosed
 * `<div>`s with text take 12 s); the scan counts those moves as nodes too.
 *
 * On its way it gives the parser a page it can read in linear time:
 * - tag names in lower case (the parser's own lowercasing rescans the page for every script);
 * - end tags of scripts, styles, noscripts and textareas as the parser looks for them (`</script>`),
 *   however the page spells them (`</SCRIPT >`);
 * - cut at a comment (or CDATA section) that never ends: the parser's pattern looks for its end
 *   from every such opening to the end of the page, quadratic in their number; a browser reads the
 *   rest of the page as the comment, and so does the scan.
 */
import { CapReached, Nesting, type ParseCap, type ParseCaps } from './nesting';
import * as rules from './rules';

// Read once: run through tsx, every use of an imported binding is a getter call, which the scan's loop felt.
const { endsWithUnquotedValue, isNameChar, isNameStart, isSpace, RAW_TEXT_TAGS, VOID_TAGS } = rules;

export type { ParseCap, ParseCaps } from './nesting';

export type Scan =
  /** `html`: the page as the parser should read it. */
  | { ok: true; html: string; nodes: number; depth: number }
  | { ok: false; cap: ParseCap; limit: number };

/** The tag the scan read last (one object, filled for each tag: the scan allocates little per tag). */
class Tag {
  closing = false;
  /** The name as written, and in lower case. */
  written = '';
  name = '';
  /** Where the name ends in the page (its attributes follow). */
  nameEnd = 0;
  /** Just past the `>` (the page's length when the tag runs to the end). */
  end = 0;
  selfClosing = false;
  /** No `>` before the end of the page. */
  runsToEnd = false;
}

export const GT = 0x3e;
export const SLASH = 0x2f;
export const QUOTE = 0x22;
export const BANG = 0x21;
export const DASH = 0x2d;

const CDATA_START = '<![CDATA[';

export function isCdataStart(page: string, at: number): boolean {
  for (let i = 0; i < CDATA_START.length; i++) if (page.charCodeAt(at + i) !== CDATA_START.charCodeAt(i)) return false;
  return true;
}

/**
 * The next position of one character at or after a position, remembered: the scan asks with positions
 * that mostly grow, so each occurrence is searched for once (a search per character of a long
 * attribute would make the scan as slow as the parse).
 */
export class NextOf {
  private asked = -1;
  private found = -1;

  constructor(
    private readonly page: string,
    private readonly char: string,
  ) {}

  /** The position, or the page's length when there is none. */
  from(at: number): number {
    if (at < this.asked || at > this.found) {
      const found = this.page.indexOf(this.char, at);
      this.found = found < 0 ? this.page.length : found;
    }
    this.asked = at;
    return this.found;
  }
}

/** The page with the changes the scan makes, built only when it makes one. */
class Rewrite {
  private readonly parts: string[] = [];
  private copied = 0;
  private end: number;

  constructor(private readonly page: string) {
    this.end = page.length;
  }

  replace(from: number, to: number, text: string): void {
    this.parts.push(this.page.slice(this.copied, from), text);
    this.copied = to;
  }

  cut(at: number): void {
    this.end = at;
  }

  toString(): string {
    if (this.parts.length === 0 && this.end === this.page.length) return this.page;
    return this.parts.join('') + this.page.slice(this.copied, this.end);
  }
}

export function scanHtml(page: string, caps: ParseCaps): Scan {
  if (page.length > caps.maxChars) return { ok: false, cap: 'size', limit: caps.maxChars };
  try {
    // Searched here, once: written inside the scan's loop, the optimised loop ran the whole search again and again (1.3 s on a 1.4 MB page).
    return new Scanner(page, caps, page.indexOf(CDATA_START) >= 0).run();
  } catch (error) {
    if (error instanceof CapReached) return { ok: false, cap: error.cap, limit: error.limit };
    throw error;
  }
}

class Scanner {
  private readonly nesting: Nesting;
  private readonly rewrite: Rewrite;
  private readonly gt: NextOf;
  private readonly quote: NextOf;
  private readonly apostrophe: NextOf;
  private readonly tag = new Tag();
  /** Where the text not yet made a node starts (the end of the last markup). */
  private textFrom = 0;

  constructor(
    private readonly page: string,
    caps: ParseCaps,
    /** The page holds a CDATA opening somewhere: the parser then reads CDATA sections in text as text. */
    private readonly cdata: boolean,
  ) {
    this.nesting = new Nesting(caps);
    this.rewrite = new Rewrite(page);
    this.gt = new NextOf(page, '>');
    this.quote = new NextOf(page, '"');
    this.apostrophe = new NextOf(page, "'");
  }

  run(): Scan {
    const { page } = this;
    const length = page.length;
    let at = 0;
    /** Where the page ends for the parser (before a comment that never ends). */
    let end = length;
    /** The parser stopped early: the last tag or script ran to the end of the page. */
    let stopped = false;
    while (!stopped) {
      const lt = page.indexOf('<', at);
      if (lt < 0) break;
      if (page.charCodeAt(lt + 1) === BANG) {
        const comment = page.charCodeAt(lt + 2) === DASH && page.charCodeAt(lt + 3) === DASH;
        if (comment || (this.cdata && isCdataStart(page, lt))) {
          const close = comment ? page.indexOf('-->', lt + 4) : page.indexOf(']]>', lt + 9);
          if (close < 0) {
            // Never ends: the rest of the page is this comment.
            this.rewrite.cut(lt);
            end = lt;
            break;
          }
          this.textUpTo(lt);
          if (!comment) this.addText(); // a CDATA section is kept as text
          at = this.textFrom = close + 3;
          continue;
        }
      }
      const { tag } = this;
      if (!this.readTag(lt)) {
        at = lt + 1;
        continue;
      }
      if (tag.name !== tag.written) this.rewrite.replace(tag.nameEnd - tag.written.length, tag.nameEnd, tag.name);
      this.textUpTo(lt);
      at = this.textFrom = tag.end;
      let closing = tag.closing;
      if (tag.runsToEnd) {
        // The parser's own end markup closes the tag, and nothing follows it.
        stopped = true;
        if (!closing) {
          this.open(tag);
          if (RAW_TEXT_TAGS.has(tag.name)) this.addText();
        }
      } else if (!closing) {
        this.open(tag);
        if (RAW_TEXT_TAGS.has(tag.name)) {
          const close = this.rawTextEnd(tag.name, tag.end);
          if (!close) {
            // The rest of the page is its text; the parser stops there.
            if (hasNonSpace(page, tag.end, length)) this.addText();
            if (tag.selfClosing) this.close(tag.name);
            stopped = true;
            break;
          }
          if (hasNonSpace(page, tag.end, close.from)) this.addText();
          const wanted = `</${tag.name}>`;
          if (page.slice(close.from, close.to) !== wanted) this.rewrite.replace(close.from, close.to, wanted);
          at = this.textFrom = close.to;
          closing = true;
        }
      }
      if (closing || tag.selfClosing || VOID_TAGS.has(tag.name)) this.close(tag.name);
    }
    if (!stopped) this.textUpTo(end);
    this.nesting.closeWhatIsLeftOpen();
    return { ok: true, html: this.rewrite.toString(), nodes: this.nesting.nodes, depth: this.nesting.depth };
  }

  /** Reads the start or end tag at `lt` into `tag` as the parser's pattern reads it; false when `<` starts text. */
  private readTag(lt: number): boolean {
    const { page, tag } = this;
    const length = page.length;
    let at = lt + 1;
    const closing = page.charCodeAt(at) === SLASH;
    if (closing) at++;
    if (at >= length || !isNameStart(page.charCodeAt(at))) return false;
    const nameStart = at;
    at++;
    while (at < length && isNameChar(page.charCodeAt(at))) at++;
    // A few spaces are name characters too (no-break space, U+1680, U+FEFF): when the longest name
    // cannot end a tag there, the parser's pattern gives them back and the tag goes on after the last one.
    // (Past the end of the page comes the parser's own end tag: a `<`.)
    if (!this.canFollowName(at)) {
      do at--;
      while (at > nameStart && !isSpace(page.charCodeAt(at)));
      if (at === nameStart) return false;
    }
    const next = page.charCodeAt(at);
    tag.closing = closing;
    tag.nameEnd = at;
    tag.selfClosing = false;
    tag.runsToEnd = false;
    if (next === GT) tag.end = at + 1;
    else if (next === SLASH) {
      tag.end = at + 2;
      tag.selfClosing = true;
    } else {
      // Attributes: the first `>`, where a quoted value jumps over any `>` it holds when what follows its
      // closing quote lets the tag go on (a space) or end (`>`, `/>`); otherwise the quote is a character.
      tag.end = length;
      tag.runsToEnd = true;
      for (at++; ; ) {
        const gt = this.gt.from(at);
        const quote = Math.min(this.quote.from(at), this.apostrophe.from(at));
        if (gt < quote) {
          if (gt < length) {
            tag.end = gt + 1;
            tag.runsToEnd = false;
            tag.selfClosing = page.charCodeAt(gt - 1) === SLASH;
          }
          break;
        }
        if (quote >= length) break;
        at = quote + 1;
        const close = (page.charCodeAt(quote) === QUOTE ? this.quote : this.apostrophe).from(quote + 1);
        if (close + 1 < length) {
          const after = page.charCodeAt(close + 1);
          if (isSpace(after) || after === GT || (after === SLASH && page.charCodeAt(close + 2) === GT)) at = close + 1;
        }
      }
    }
    tag.written = page.slice(nameStart, tag.nameEnd);
    tag.name = tag.written.toLowerCase();
    // `<a href=/x/>` is not self-closing: the slash belongs to the unquoted value.
    if (tag.selfClosing && !closing && !VOID_TAGS.has(tag.name) && endsWithUnquotedValue(page, tag.nameEnd, tag.end - 2)) tag.selfClosing = false;
    return true;
  }

  /** A space, `>` or `/>`: what lets a tag go on or end after its name. */
  private canFollowName(at: number): boolean {
    const code = this.page.charCodeAt(at);
    return at < this.page.length && (code === GT || isSpace(code) || (code === SLASH && this.page.charCodeAt(at + 1) === GT));
  }

  /** The end tag of a raw-text element from `from` on. */
  private rawTextEnd(name: string, from: number): { from: number; to: number } | undefined {
    return rawTextEnd(this.page, name, from);
  }

  private open(tag: Tag): void {
    this.nesting.open(tag.name, tag.selfClosing);
  }

  private close(name: string): void {
    this.nesting.close(name);
  }

  /** Text between the last markup and `to` becomes a node of the open element. */
  private textUpTo(to: number): void {
    if (this.textFrom < to) this.addText();
  }

  private addText(): void {
    this.nesting.addText();
  }
}

/** Whether `from..to` holds a character other than a space. */
export function hasNonSpace(page: string, from: number, to: number): boolean {
  for (let at = from; at < to; at++) if (!isSpace(page.charCodeAt(at))) return true;
  return false;
}

/** The end tag of a raw-text element (`</script`, any case, spaces, `>`) in `page` from `from` on (both scans). */
export function rawTextEnd(page: string, name: string, from: number): { from: number; to: number } | undefined {
  for (let at = page.indexOf('</', from); at >= 0; at = page.indexOf('</', at + 2)) {
    let cursor = at + 2;
    let matched = true;
    for (let i = 0; i < name.length; i++, cursor++) {
      const code = page.charCodeAt(cursor);
      if ((code >= 0x41 && code <= 0x5a ? code + 0x20 : code) !== name.charCodeAt(i)) {
        matched = false;
        break;
      }
    }
    if (!matched) continue;
    while (cursor < page.length && isSpace(page.charCodeAt(cursor))) cursor++;
    if (page.charCodeAt(cursor) === GT) return { from: at, to: cursor + 1 };
  }
  return undefined;
}
