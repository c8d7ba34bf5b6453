/**
 * Inline content: text, links, images, emphasis and code spans. The result keeps HTML's collapsed
 * whitespace (single spaces) and marks `<br>` as `\n`; `finishParagraph` turns a run into a block.
 */
import { type HTMLElement, type Node, NOISE_TAGS, NodeType, collapseWhitespace, imageSource, isElement, isHidden, resolveUrl, tagOf } from '../dom';
import { codeSpan, edges, escapeLabel, escapeLineStart, escapeText, markdownUrl, wrap } from './escape';

export interface Context {
  /** What relative URLs resolve against. */
  base: string;
  /** Set inside an `<a>` that wraps blocks: every inline run in it becomes a link to this URL. */
  link?: string;
  inLink?: boolean;
}

const ZERO_WIDTH = /[\u200b-\u200d\u2060\ufeff]/g;

/** Checkboxes of task lists (`- [x] done`) are content; every other form control is not. */
function isTaskCheckbox(el: HTMLElement): boolean {
  if (el.getAttribute('type')?.toLowerCase() !== 'checkbox') return false;
  const parent = el.parentNode;
  return parent !== null && (tagOf(parent) === 'li' || (parent.parentNode !== null && tagOf(parent.parentNode) === 'li'));
}

/** Whether an element is left out of the Markdown. */
export function isSkipped(el: HTMLElement, tag: string): boolean {
  if (NOISE_TAGS.has(tag)) return !(tag === 'input' && isTaskCheckbox(el));
  return isHidden(el);
}

/** Inline Markdown for the children of an element. */
export function renderInline(parent: Node, ctx: Context): string {
  let out = '';
  for (const child of parent.childNodes) {
    if (child.nodeType === NodeType.TEXT_NODE) out += escapeText(collapseWhitespace(child.text));
    else if (isElement(child)) {
      const tag = tagOf(child);
      if (!isSkipped(child, tag)) out += renderInlineElement(child, tag, ctx);
    }
  }
  return out;
}

export function renderInlineElement(el: HTMLElement, tag: string, ctx: Context): string {
  switch (tag) {
    case 'br':
      return '\n';
    case 'wbr':
      return '';
    case 'img':
      return image(el, ctx);
    case 'a':
      return link(el, ctx);
    case 'strong':
    case 'b':
      return wrap(renderInline(el, ctx), '**');
    case 'em':
    case 'i':
    case 'cite':
    case 'dfn':
    case 'var':
      return wrap(renderInline(el, ctx), '*');
    case 'del':
    case 's':
    case 'strike':
      return wrap(renderInline(el, ctx), '~~');
    case 'code':
    case 'kbd':
    case 'samp':
    case 'tt':
      return codeSpan(el.text);
    case 'q':
      return `"${renderInline(el, ctx)}"`;
    case 'input':
      return el.hasAttribute('checked') ? '[x] ' : '[ ] ';
    default:
      return renderInline(el, ctx);
  }
}

function image(el: HTMLElement, ctx: Context): string {
  const alt = collapseWhitespace(el.getAttribute('alt') ?? '').trim();
  // Emoji pictures read better as their text (":tada:") than as image links.
  if (alt && /(?:^|\s)emoji(?:\s|$)/.test(el.getAttribute('class') ?? '')) return escapeText(alt);
  if (el.getAttribute('width') === '1' && el.getAttribute('height') === '1') return '';
  const src = resolveUrl(imageSource(el), ctx.base);
  return src ? `![${escapeLabel(alt)}](${markdownUrl(src)})` : '';
}

function link(el: HTMLElement, ctx: Context): string {
  if (ctx.inLink) return renderInline(el, ctx);
  const inner = renderInline(el, { ...ctx, inLink: true }).replace(ZERO_WIDTH, '').replace(/\n/g, ' ');
  // Icon-only and empty anchors (heading permalinks, social icons) carry no text to link.
  if (!inner.trim()) return inner;
  const href = resolveUrl(el.getAttribute('href'), ctx.base);
  if (!href) return inner;
  const [lead, text, trail] = edges(inner);
  return `${lead}[${text}](${markdownUrl(href)})${trail}`;
}

/** Turns an inline run into a paragraph block, or '' when it holds no text. */
export function finishParagraph(run: string, ctx: Context): string {
  if (run.trim() === '') return '';
  const text = run.replace(/ {2,}/g, ' ').replace(/ *\n */g, '\n').trim();
  const lines = text.includes('\n') ? text.split('\n').map(escapeLineStart).join('  \n') : escapeLineStart(text);
  return ctx.link ? linkRun(lines, ctx.link) : lines;
}

/** Wraps a run in the link of an enclosing block-level `<a>`, unless the run already links somewhere. */
export function linkRun(text: string, href: string): string {
  if (/(?:^|[^!\\])\[/.test(text) || text.includes('\n')) return text;
  return `[${text}](${markdownUrl(href)})`;
}
