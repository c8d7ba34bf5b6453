/**
 * Block structure: walks a container, groups its inline children into paragraphs and renders block
 * children (headings, lists, quotes, code, tables) in order. An inline element that holds blocks (a
 * product card's `<a>` around an image and a heading) is opened up as a container; for `<a>`, each
 * paragraph and heading inside keeps the link.
 */
import { type HTMLElement, BLOCK_TAGS, NodeType, collapseWhitespace, isElement, resolveUrl, tagOf } from '../dom';
import { renderCode } from './code';
import { escapeText, markdownUrl } from './escape';
import { type Context, finishParagraph, isSkipped, linkRun, renderInline, renderInlineElement } from './inline';
import { cellLine, renderTable } from './table';

const containsBlockCache = new WeakMap<HTMLElement, boolean>();

function containsBlock(el: HTMLElement): boolean {
  const cached = containsBlockCache.get(el);
  if (cached !== undefined) return cached;
  let found = false;
  for (const child of el.childNodes) {
    if (isElement(child) && (BLOCK_TAGS.has(tagOf(child)) || containsBlock(child))) {
      found = true;
      break;
    }
  }
  containsBlockCache.set(el, found);
  return found;
}

function pushIf(out: string[], block: string): void {
  if (block) out.push(block);
}

const LIST_START = /^(?:[-*+]|\d{1,9}[.)])(?: |$)/;

/** Joins blocks with blank lines; inside a list item a nested list follows its text directly, keeping the list tight. */
export function joinBlocks(blocks: string[], inListItem = false): string {
  let out = '';
  for (const block of blocks) {
    if (!out) out = block;
    else out += (inListItem && LIST_START.test(block) ? '\n' : '\n\n') + block;
  }
  return out;
}

/** Markdown blocks for the children of a container element. */
export function renderBlocks(parent: HTMLElement, ctx: Context): string[] {
  const out: string[] = [];
  appendBlocks(parent, ctx, out);
  return out;
}

/** Appends to `out` rather than returning arrays to spread: a page may hold more blocks than a call takes arguments. */
function appendBlocks(parent: HTMLElement, ctx: Context, out: string[]): void {
  let run = '';
  for (const child of parent.childNodes) {
    if (child.nodeType === NodeType.TEXT_NODE) {
      run += escapeText(collapseWhitespace(child.text));
      continue;
    }
    if (!isElement(child)) continue;
    const tag = tagOf(child);
    if (isSkipped(child, tag)) continue;
    if (BLOCK_TAGS.has(tag) || containsBlock(child)) {
      pushIf(out, finishParagraph(run, ctx));
      run = '';
      renderBlock(child, tag, ctx, out);
    } else run += renderInlineElement(child, tag, ctx);
  }
  pushIf(out, finishParagraph(run, ctx));
}

function renderBlock(el: HTMLElement, tag: string, ctx: Context, out: string[]): void {
  switch (tag) {
    case 'h1':
    case 'h2':
    case 'h3':
    case 'h4':
    case 'h5':
    case 'h6': {
      const text = finishParagraph(renderInline(el, ctx).replace(/\n/g, ' '), { base: ctx.base });
      if (text) out.push(`${'#'.repeat(Number(tag[1]))} ${ctx.link ? linkRun(text, ctx.link) : text}`);
      return;
    }
    case 'pre':
    case 'xmp':
    case 'listing':
      pushIf(out, renderCode(el));
      return;
    case 'ul':
    case 'ol':
    case 'menu':
    case 'dir':
      pushIf(out, renderList(el, ctx));
      return;
    case 'blockquote': {
      const inner = joinBlocks(renderBlocks(el, ctx));
      if (inner) out.push(inner.split('\n').map((line) => (line ? `> ${line}` : '>')).join('\n'));
      return;
    }
    case 'table': {
      const caption = el.childNodes.find((child): child is HTMLElement => isElement(child) && tagOf(child) === 'caption');
      const table = renderTable(el, (cell) => cellLine(joinBlocks(renderBlocks(cell, ctx))));
      if (table === undefined) {
        appendBlocks(el, ctx, out);
        return;
      }
      if (caption) pushIf(out, finishParagraph(renderInline(caption, ctx), ctx));
      out.push(table);
      return;
    }
    case 'caption':
      return; // rendered with its table
    case 'hr':
      out.push('---');
      return;
    case 'dt': {
      const term = finishParagraph(renderInline(el, ctx).replace(/\n/g, ' '), ctx);
      if (term) out.push(`**${term}**`);
      return;
    }
    case 'audio':
    case 'video':
      pushIf(out, mediaLink(el, tag, ctx));
      return;
    case 'a': {
      const href = resolveUrl(el.getAttribute('href'), ctx.base);
      appendBlocks(el, href && !ctx.inLink ? { ...ctx, link: href, inLink: true } : ctx, out);
      return;
    }
    default:
      appendBlocks(el, ctx, out);
  }
}


function renderList(list: HTMLElement, ctx: Context): string {
  const ordered = tagOf(list) === 'ol';
  let number = ordered ? parseInt(list.getAttribute('start') ?? '1', 10) : 1;
  if (Number.isNaN(number)) number = 1;
  const items: string[] = [];
  for (const child of list.childNodes) {
    if (!isElement(child)) continue;
    const tag = tagOf(child);
    if (isSkipped(child, tag)) continue;
    if ((tag === 'ul' || tag === 'ol') && items.length > 0) {
      // A list placed directly in a list (invalid, but common) belongs to the item before it.
      const nested = renderList(child, ctx);
      const last = items.length - 1;
      if (nested) items[last] = `${items[last] ?? ''}\n${indent(nested, ordered ? `${number - 1}. `.length : 2)}`;
      continue;
    }
    const body = joinBlocks(renderBlocks(child, ctx), true);
    if (!body) continue; // an item with nothing to read (an icon-only link) is noise
    const marker = ordered ? `${number++}.` : '-';
    items.push(`${marker} ${indent(body, marker.length + 1, true)}`);
  }
  const loose = items.some((item) => item.includes('\n\n'));
  return items.join(loose ? '\n\n' : '\n');
}

/** Indents every line but (optionally) the first; blank lines stay empty. */
function indent(text: string, width: number, skipFirst = false): string {
  const pad = ' '.repeat(width);
  return text
    .split('\n')
    .map((line, i) => ((skipFirst && i === 0) || line === '' ? line : pad + line))
    .join('\n');
}

function mediaLink(el: HTMLElement, tag: string, ctx: Context): string {
  const source = el.getAttribute('src') ?? el.querySelector('source[src]')?.getAttribute('src');
  const url = resolveUrl(source, ctx.base);
  if (!url) return '';
  const label = collapseWhitespace(el.getAttribute('title') ?? el.getAttribute('aria-label') ?? '').trim();
  return `[${tag === 'audio' ? 'Audio' : 'Video'}${label ? `: ${escapeText(label)}` : ''}](${markdownUrl(url)})`;
}
