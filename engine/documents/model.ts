/**
 * The document model every reader produces (headings, paragraphs, nested lists, tables, links, page
 * boundaries) and its rendering. Rendering goes through HTML and the service's own converters
 * (engine/outputs), so documents and pages share one Markdown dialect, one escaping and one table
 * layout; each page is converted by itself so its boundary marker can sit between pages.
 */
import { toMarkdown } from '../outputs/markdown';
import { toPlainText } from '../outputs/plaintext';
import type { DocumentOutput } from './types';

export interface Inline {
  text: string;
  href?: string;
  bold?: boolean;
  italic?: boolean;
}

export interface ListItem {
  content: Inline[];
  /** Nested lists (and, rarely, paragraphs) under the item. */
  children: Block[];
}

export type Block =
  | { kind: 'heading'; level: number; content: Inline[] }
  | { kind: 'paragraph'; content: Inline[] }
  /** `group`: the items as read (PDF) and how many lists they made, so a list cut by a page break can be nested again as a whole. */
  | { kind: 'list'; ordered: boolean; start?: number; items: ListItem[]; group?: ListGroup }
  | { kind: 'table'; rows: Inline[][][]; header: boolean }
  /** Raw HTML from a library (mammoth), converted by the same converter. */
  | { kind: 'html'; html: string };

/** A document as pages of blocks; formats without pages have one. */
export interface DocumentModel {
  pages: Block[][];
  /** Whether pages are real pages worth a marker (PDF, slides), not one pseudo-page. */
  paged: boolean;
  /** What the marker calls a page: `<!-- page 3 -->`, `<!-- slide 3 -->`. */
  unit?: 'page' | 'slide';
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
export const escapeHtml = (text: string): string => text.replace(/[&<>"]/g, (ch) => ESCAPES[ch]!);

const SAFE_LINK = /^(?:https?:|mailto:|tel:|#)/i;

function inlineHtml(content: Inline[]): string {
  let out = '';
  for (const run of content) {
    let html = escapeHtml(run.text);
    if (!html) continue;
    if (run.bold) html = `<strong>${html}</strong>`;
    if (run.italic) html = `<em>${html}</em>`;
    if (run.href && SAFE_LINK.test(run.href)) html = `<a href="${escapeHtml(run.href)}">${html}</a>`;
    out += html;
  }
  return out;
}

/** Adjacent runs with the same link and emphasis merged, so a link split across lines stays one link. */
export function mergeRuns(content: Inline[]): Inline[] {
  const out: Inline[] = [];
  for (const run of content) {
    const last = out[out.length - 1];
    if (last && last.href === run.href && !!last.bold === !!run.bold && !!last.italic === !!run.italic) last.text += run.text;
    else out.push({ ...run });
  }
  return out;
}

function blockHtml(block: Block, parts: string[], depth: number): void {
  switch (block.kind) {
    case 'heading': {
      const level = Math.min(6, Math.max(1, block.level));
      parts.push(`<h${level}>${inlineHtml(block.content)}</h${level}>`);
      return;
    }
    case 'paragraph':
      parts.push(`<p>${inlineHtml(block.content)}</p>`);
      return;
    case 'list': {
      if (depth > 50) return;
      const tag = block.ordered ? 'ol' : 'ul';
      parts.push(block.ordered && block.start !== undefined && block.start !== 1 ? `<ol start="${block.start}">` : `<${tag}>`);
      for (const item of block.items) {
        parts.push(`<li>${inlineHtml(item.content)}`);
        for (const child of item.children) blockHtml(child, parts, depth + 1);
        parts.push('</li>');
      }
      parts.push(`</${tag}>`);
      return;
    }
    case 'table': {
      if (block.rows.length === 0) return;
      parts.push('<table>');
      block.rows.forEach((row, index) => {
        const cell = block.header && index === 0 ? 'th' : 'td';
        parts.push(`<tr>${row.map((content) => `<${cell}>${inlineHtml(content)}</${cell}>`).join('')}</tr>`);
      });
      parts.push('</table>');
      return;
    }
    case 'html':
      parts.push(block.html);
      return;
  }
}

export function blocksToHtml(blocks: Block[]): string {
  const parts: string[] = ['<html><body>'];
  for (const block of blocks) blockHtml(block, parts, 0);
  parts.push('</body></html>');
  return parts.join('\n');
}

/** Links in documents are absolute or nothing: a base that resolves nothing relative into something else. */
const BASE = 'about:blank';

export function renderModel(model: DocumentModel, output: DocumentOutput, pageMarkers: boolean): string {
  const marked = pageMarkers && model.paged;
  if (output === 'html') return renderHtml(model, marked);
  const pages: string[] = [];
  model.pages.forEach((blocks, index) => {
    const html = blocksToHtml(blocks);
    const text = (output === 'markdown' ? toMarkdown(html, BASE) : toPlainText(html)).trim();
    if (!marked) {
      if (text) pages.push(text);
      return;
    }
    pages.push(output === 'markdown' ? `<!-- ${model.unit ?? 'page'} ${index + 1} -->${text ? `\n\n${text}` : ''}` : text);
  });
  if (marked && output === 'plaintext') return pages.join('\n\f\n') + '\n';
  return pages.join('\n\n') + '\n';
}

/** One HTML document of every page, each after its marker comment (the same as Markdown's). */
function renderHtml(model: DocumentModel, marked: boolean): string {
  const parts: string[] = ['<html><body>'];
  model.pages.forEach((blocks, index) => {
    if (marked) parts.push(`<!-- ${model.unit ?? 'page'} ${index + 1} -->`);
    for (const block of blocks) blockHtml(block, parts, 0);
  });
  parts.push('</body></html>');
  return parts.join('\n') + '\n';
}

export interface ListGroup {
  flat: FlatItem[];
  count: number;
}

export interface FlatItem {
  content: Inline[];
  /** 0 for the outermost list. */
  level: number;
  ordered: boolean;
  start?: number;
}

/** Flat list items with levels to nested lists; a change of kind at one level starts a new list. */
export function listBlocks(items: FlatItem[]): Block[] {
  const root: Block[] = [];
  const stack: { list: Extract<Block, { kind: 'list' }>; level: number }[] = [];
  for (const item of items) {
    while (stack.length > 0 && stack[stack.length - 1]!.level > item.level) stack.pop();
    const top = stack[stack.length - 1];
    const entry: ListItem = { content: item.content, children: [] };
    if (top && top.level === item.level && top.list.ordered === item.ordered) {
      top.list.items.push(entry);
      continue;
    }
    if (top && top.level === item.level) stack.pop();
    const list: Extract<Block, { kind: 'list' }> = { kind: 'list', ordered: item.ordered, items: [entry], ...(item.ordered && item.start !== undefined && item.start !== 1 ? { start: item.start } : {}) };
    const parent = stack[stack.length - 1];
    const parentItem = parent?.list.items[parent.list.items.length - 1];
    if (parent && parentItem && item.level > parent.level) parentItem.children.push(list);
    else root.push(list);
    stack.push({ list, level: item.level });
  }
  return root;
}
