/**
 * The pre-scan of a page as it arrives: text in pieces, scanned up to the last token the pieces so far
 * decide, so a page past the depth or node cap is known as soon as its first part is (a page nested
 * 900,000 deep is past a depth cap of 50,000 in its first 250 KB), before the rest is read.
 *
 * It reads tokens as the whole-page scan (./index.ts) does and nests them with the same Nesting, so
 * after any number of tokens its counts are the whole-page scan's after the same tokens. Where that
 * scan would look past what has arrived (a tag's `>`, a quote's closing quote, a comment's or a raw
 * text's end), this one waits for more. It never decides how the page ends: it only answers a cap
 * the whole page goes past too (the counts only grow), and a page it lets through still gets the
 * whole-page scan. Text it has passed is dropped; the unfinished token is scanned again only once
 * what waits has doubled, so the work stays linear in the page.
 */
import * as whole from './index';
import { CapReached, Nesting, type ParseCap, type ParseCaps } from './nesting';
import * as rules from './rules';

// Read once: run through tsx, every use of an imported binding is a getter call, which made this scan twice as slow.
const { BANG, DASH, GT, QUOTE, SLASH, NextOf, hasNonSpace, isCdataStart } = whole;
const { endsWithUnquotedValue, isNameChar, isNameStart, isSpace, RAW_TEXT_TAGS, VOID_TAGS } = rules;
type NextOf = whole.NextOf;

export interface StreamRefusal {
  cap: ParseCap;
  limit: number;
}

/** The pieces so far end before the token at the scan's position does. */
const MORE = -1;

/** The tag read last (one object, filled for each tag, as the whole-page scan does). */
const tag = { closing: false, name: '', end: 0, selfClosing: false };
type StreamTag = typeof tag;

export class StreamScan {
  private readonly nesting: Nesting;
  /** Text not scanned yet: the unfinished token and what came after it. */
  private waiting: string[] = [];
  private waitingChars = 0;
  /** Scan again once this many characters wait. */
  private scanAt = 0;
  /** Characters so far. */
  private chars = 0;
  /** Text since the last markup that is not a node yet. */
  private pendingText = false;
  private refusal: StreamRefusal | undefined;

  constructor(private readonly caps: ParseCaps) {
    this.nesting = new Nesting(caps);
  }

  /** The next piece of the page; the cap the page is past, once it is. */
  push(text: string): StreamRefusal | undefined {
    if (this.refusal || text.length === 0) return this.refusal;
    this.chars += text.length;
    if (this.chars > this.caps.maxChars) return (this.refusal = { cap: 'size', limit: this.caps.maxChars });
    this.waiting.push(text);
    this.waitingChars += text.length;
    if (this.waitingChars < this.scanAt) return undefined;
    const page = this.waiting.length === 1 ? (this.waiting[0] as string) : this.waiting.join('');
    let scanned: number;
    try {
      scanned = this.scan(page);
    } catch (error) {
      if (!(error instanceof CapReached)) throw error;
      this.waiting = [];
      return (this.refusal = { cap: error.cap, limit: error.limit });
    }
    const rest = scanned < page.length ? page.slice(scanned) : '';
    this.waiting = rest === '' ? [] : [rest];
    this.waitingChars = rest.length;
    this.scanAt = 2 * rest.length + 1;
    return undefined;
  }

  /** Depth and nodes so far (lower bounds of the whole page's). */
  get counts(): { nodes: number; depth: number } {
    return { nodes: this.nesting.nodes, depth: this.nesting.depth };
  }

  /** Scans `page` up to the first token it does not decide; answers where that token starts. */
  private scan(page: string): number {
    const length = page.length;
    const nesting = this.nesting;
    const gt = new NextOf(page, '>');
    const quote = new NextOf(page, '"');
    const apostrophe = new NextOf(page, "'");
    /** Where the text not yet made a node starts; before the page when text came before it. */
    let textFrom = this.pendingText ? -1 : 0;
    const textUpTo = (to: number): void => {
      if (textFrom < to) nesting.addText();
    };
    let at = 0;
    for (;;) {
      const lt = page.indexOf('<', at);
      if (lt < 0) {
        this.pendingText = textFrom < length;
        return length;
      }
      // Enough of the page to tell a comment or a CDATA section from a tag.
      if (lt + CDATA_LENGTH > length) return this.stop(lt, textFrom);
      if (page.charCodeAt(lt + 1) === BANG) {
        const comment = page.charCodeAt(lt + 2) === DASH && page.charCodeAt(lt + 3) === DASH;
        if (comment || isCdataStart(page, lt)) {
          const close = comment ? page.indexOf('-->', lt + 4) : page.indexOf(']]>', lt + 9);
          if (close < 0) return this.stop(lt, textFrom);
          textUpTo(lt);
          if (!comment) nesting.addText();
          at = textFrom = close + 3;
          continue;
        }
      }
      const read = readTag(page, lt, gt, quote, apostrophe);
      if (read === MORE) return this.stop(lt, textFrom);
      if (read === undefined) {
        at = lt + 1;
        continue;
      }
      let closing = tag.closing;
      let next = tag.end;
      let raw: { from: number; to: number } | undefined;
      if (!closing && RAW_TEXT_TAGS.has(tag.name)) {
        const found = rawTextEnd(page, tag.name, tag.end);
        if (found === MORE) return this.stop(lt, textFrom);
        raw = found;
      }
      textUpTo(lt);
      if (!closing) {
        nesting.open(tag.name, tag.selfClosing);
        if (raw) {
          if (hasNonSpace(page, tag.end, raw.from)) nesting.addText();
          next = raw.to;
          closing = true;
        }
      }
      if (closing || tag.selfClosing || VOID_TAGS.has(tag.name)) nesting.close(tag.name);
      at = textFrom = next;
    }
  }

  /** The scan waits at `lt`; whether text before it is not a node yet. */
  private stop(lt: number, textFrom: number): number {
    this.pendingText = textFrom < lt;
    return lt;
  }
}

const CDATA_LENGTH = '<![CDATA['.length;

/**
 * The start or end tag at `lt` as the whole-page scan reads it (its `readTag`), undefined when `<`
 * starts text, MORE when what follows decides it and has not arrived.
 */
function readTag(page: string, lt: number, gt: NextOf, quote: NextOf, apostrophe: NextOf): StreamTag | undefined | typeof MORE {
  const length = page.length;
  let at = lt + 1;
  const closing = page.charCodeAt(at) === SLASH;
  if (closing) at++;
  if (at >= length) return MORE;
  if (!isNameStart(page.charCodeAt(at))) return undefined;
  const nameStart = at;
  at++;
  while (at < length && isNameChar(page.charCodeAt(at))) at++;
  // The name may go on, or end with `/` before a `>` that has not arrived.
  if (at + 1 >= length) return MORE;
  const after = page.charCodeAt(at);
  if (!(after === GT || isSpace(after) || (after === SLASH && page.charCodeAt(at + 1) === GT))) {
    do at--;
    while (at > nameStart && !isSpace(page.charCodeAt(at)));
    if (at === nameStart) return undefined;
  }
  const nameEnd = at;
  const next = page.charCodeAt(at);
  let end: number;
  let selfClosing = false;
  if (next === GT) end = at + 1;
  else if (next === SLASH) {
    end = at + 2;
    selfClosing = true;
  } else {
    for (at++; ; ) {
      const nextGt = gt.from(at);
      const nextQuote = Math.min(quote.from(at), apostrophe.from(at));
      if (nextGt < nextQuote) {
        end = nextGt + 1;
        selfClosing = page.charCodeAt(nextGt - 1) === SLASH;
        break;
      }
      // No `>` nor quote yet, or a quote whose closing quote (and what follows it) has not arrived.
      if (nextQuote >= length) return MORE;
      at = nextQuote + 1;
      const close = (page.charCodeAt(nextQuote) === QUOTE ? quote : apostrophe).from(nextQuote + 1);
      if (close + 2 >= length) return MORE;
      const following = page.charCodeAt(close + 1);
      if (isSpace(following) || following === GT || (following === SLASH && page.charCodeAt(close + 2) === GT)) at = close + 1;
    }
  }
  const name = page.slice(nameStart, nameEnd).toLowerCase();
  if (selfClosing && !closing && !VOID_TAGS.has(name) && endsWithUnquotedValue(page, nameEnd, end - 2)) selfClosing = false;
  tag.closing = closing;
  tag.name = name;
  tag.end = end;
  tag.selfClosing = selfClosing;
  return tag;
}

/** The end tag of a raw-text element from `from` on, or MORE while it has not arrived. */
function rawTextEnd(page: string, name: string, from: number): { from: number; to: number } | typeof MORE {
  return whole.rawTextEnd(page, name, from) ?? MORE;
}
