/**
 * OpenDocument (ODT, ODS, ODP) read from content.xml: headings by outline level, paragraphs, nested
 * lists (numbered when their list style numbers), tables, links; a table per sheet; a heading per
 * slide from its title frame, with the notes when asked.
 */
import { documentError } from './failures';
import type { Block, DocumentModel, Inline } from './model';
import { listBlocks, mergeRuns, type FlatItem } from './model';
import { odfInfo, requireXml, readXml, type ReadContext } from './ooxml';
import type { DocumentFormat, DocumentInfo } from './types';
import { elements, find, findAll, first, isElement, type XmlElement } from './xml';
import { sheetTable } from './xlsx';
import type { ZipArchive } from './zip';

export async function readOdf(zip: ZipArchive, context: ReadContext, format: DocumentFormat): Promise<{ model: DocumentModel; info: DocumentInfo }> {
  const content = requireXml(zip, 'content.xml', context.limits);
  const root = first(content, 'office:document-content');
  const body = first(root, 'office:body');
  const numbered = numberedListStyles([first(root, 'office:automatic-styles'), find(readXml(zip, 'styles.xml', context.limits), 'office:styles')]);
  const reader = new OdfText(numbered);
  if (format === 'odt') {
    const pages = [reader.blocks(first(body, 'office:text'))];
    return { model: { pages, paged: false }, info: odfInfo(zip, format, context.limits, null) };
  }
  if (format === 'ods') {
    const sheets = elements(first(body, 'office:spreadsheet') ?? { name: '', attrs: {}, children: [] }, 'table:table');
    if (sheets.length > context.limits.maxPages) throw documentError('document_too_large', 'sheets', `The workbook has more than ${context.limits.maxPages} sheets.`);
    const pages = sheets.map((sheet) => [{ kind: 'heading' as const, level: 2, content: [{ text: sheet.attrs['table:name'] ?? '' }] }, ...sheetTable(reader.grid(sheet, context.limits.maxCells))]);
    return { model: { pages, paged: false }, info: odfInfo(zip, format, context.limits, sheets.length) };
  }
  const slides = elements(first(body, 'office:presentation') ?? { name: '', attrs: {}, children: [] }, 'draw:page');
  if (slides.length > context.limits.maxPages) throw documentError('document_too_large', 'slides', `The presentation has more than ${context.limits.maxPages} slides.`);
  const pages = slides.map((slide) => {
    const blocks: Block[] = [];
    for (const frame of elements(slide, 'draw:frame')) {
      if (frame.attrs['presentation:class'] === 'title') {
        const text = reader.inline(find(frame, 'text:p') ?? frame).map((run) => run.text).join('').trim();
        if (text) blocks.unshift({ kind: 'heading', level: 2, content: [{ text }] });
      } else if (first(frame, 'table:table')) blocks.push(reader.table(first(frame, 'table:table')!));
      else blocks.push(...reader.blocks(first(frame, 'draw:text-box')));
    }
    const notes = first(slide, 'presentation:notes');
    if (context.speakerNotes && notes) {
      const noteBlocks = elements(notes, 'draw:frame').flatMap((frame) => reader.blocks(first(frame, 'draw:text-box')));
      if (noteBlocks.length > 0) blocks.push({ kind: 'heading', level: 3, content: [{ text: 'Notes' }] }, ...noteBlocks);
    }
    return blocks;
  });
  return { model: { pages, paged: true, unit: 'slide' }, info: odfInfo(zip, format, context.limits, slides.length) };
}

/** Names of list styles whose first level numbers its items. */
function numberedListStyles(containers: (XmlElement | undefined)[]): Set<string> {
  const out = new Set<string>();
  for (const container of containers) {
    if (!container) continue;
    for (const style of findAll(container, 'text:list-style')) {
      const level = elements(style).find((child) => child.name.startsWith('text:list-level-style'));
      if (level?.name === 'text:list-level-style-number' && style.attrs['style:name']) out.add(style.attrs['style:name']);
    }
  }
  return out;
}

class OdfText {
  constructor(private readonly numbered: Set<string>) {}

  blocks(container: XmlElement | undefined): Block[] {
    const out: Block[] = [];
    if (!container) return out;
    for (const node of elements(container)) {
      switch (node.name) {
        case 'text:h': {
          const content = this.inline(node);
          if (content.length > 0) out.push({ kind: 'heading', level: Math.min(6, Number(node.attrs['text:outline-level'] ?? 1) || 1), content });
          break;
        }
        case 'text:p': {
          const content = this.inline(node);
          if (content.length > 0) out.push({ kind: 'paragraph', content });
          break;
        }
        case 'text:list': {
          const items: FlatItem[] = [];
          this.listItems(node, 0, this.numbered.has(node.attrs['text:style-name'] ?? ''), items);
          out.push(...listBlocks(items));
          break;
        }
        case 'table:table':
          out.push(this.table(node));
          break;
        case 'text:section':
        case 'draw:text-box':
          out.push(...this.blocks(node));
          break;
      }
    }
    return out;
  }

  /** Items of a list and of the lists nested in them, flat with their levels (a nested list inherits numbering unless it names its own style). */
  private listItems(list: XmlElement, level: number, ordered: boolean, out: FlatItem[]): void {
    if (level > 20) return;
    for (const item of elements(list, 'text:list-item')) {
      let added = false;
      for (const child of elements(item)) {
        if (child.name === 'text:p' || child.name === 'text:h') {
          const content = this.inline(child);
          if (content.length === 0) continue;
          const last = out[out.length - 1];
          if (added && last) last.content.push({ text: ' ' }, ...content);
          else out.push({ content, level, ordered });
          added = true;
        } else if (child.name === 'text:list') {
          const style = child.attrs['text:style-name'];
          this.listItems(child, level + 1, style ? this.numbered.has(style) : ordered, out);
        }
      }
    }
  }

  table(table: XmlElement): Block {
    const rows: Inline[][][] = [];
    for (const row of findAll(table, 'table:table-row')) {
      rows.push(elements(row).filter((cell) => cell.name === 'table:table-cell' || cell.name === 'table:covered-table-cell').map((cell) => this.cell(cell)));
    }
    return { kind: 'table', rows, header: true };
  }

  /** A sheet as a sparse grid; repeated empty rows and cells advance the position without being expanded. */
  grid(sheet: XmlElement, maxCells: number): Inline[][][] {
    const grid: Inline[][][] = [];
    let r = 0;
    let cells = 0;
    for (const row of findAll(sheet, 'table:table-row')) {
      const rowRepeat = Math.min(Number(row.attrs['table:number-rows-repeated'] ?? 1) || 1, 1_048_576);
      let c = 0;
      const line: Inline[][] = [];
      for (const cell of elements(row)) {
        if (cell.name !== 'table:table-cell' && cell.name !== 'table:covered-table-cell') continue;
        const repeat = Math.min(Number(cell.attrs['table:number-columns-repeated'] ?? 1) || 1, 16_384);
        const content = this.cell(cell);
        if (content.length > 0) {
          for (let k = 0; k < repeat; k++) {
            if (++cells > maxCells) throw documentError('document_too_large', 'cells', `The workbook has more than ${maxCells} cells.`);
            line[c + k] = content;
          }
        }
        c += repeat;
      }
      if (line.length > 0) {
        const copies = Math.min(rowRepeat, Math.max(1, Math.floor((maxCells - cells) / Math.max(1, line.length)) + 1));
        if (rowRepeat > copies) throw documentError('document_too_large', 'cells', `The workbook has more than ${maxCells} cells.`);
        for (let k = 0; k < copies; k++) grid[r + k] = line;
        cells += line.length * (copies - 1);
      }
      r += rowRepeat;
    }
    return grid;
  }

  private cell(cell: XmlElement): Inline[] {
    const type = cell.attrs['office:value-type'];
    if (type === 'float' || type === 'percentage' || type === 'currency') {
      const value = cell.attrs['office:value'];
      if (value !== undefined) return [{ text: value }];
    }
    if (type === 'date' && cell.attrs['office:date-value']) return [{ text: cell.attrs['office:date-value'].replace('T00:00:00', '') }];
    if (type === 'boolean' && cell.attrs['office:boolean-value']) return [{ text: cell.attrs['office:boolean-value'].toUpperCase() }];
    const content: Inline[] = [];
    for (const p of findAll(cell, 'text:p')) {
      const line = this.inline(p);
      if (line.length === 0) continue;
      if (content.length > 0) content.push({ text: ' ' });
      content.push(...line);
    }
    return mergeRuns(content);
  }

  /** A paragraph's text with spaces (`text:s`), tabs, line breaks and links. */
  inline(node: XmlElement, href?: string, depth = 0): Inline[] {
    const out: Inline[] = [];
    if (depth > 30) return out;
    for (const child of node.children) {
      if (!isElement(child)) {
        const text = child.replace(/\s+/g, ' ');
        if (text) out.push(href ? { text, href } : { text });
        continue;
      }
      if (child.name === 'text:s') out.push({ text: ' '.repeat(Math.min(Number(child.attrs['text:c'] ?? 1) || 1, 100)) });
      else if (child.name === 'text:tab' || child.name === 'text:line-break') out.push({ text: ' ' });
      else if (child.name === 'text:a') out.push(...this.inline(child, child.attrs['xlink:href'], depth + 1));
      else if (child.name === 'text:span' || child.name === 'text:bookmark-ref' || child.name === 'text:reference-ref') out.push(...this.inline(child, href, depth + 1));
    }
    const merged = mergeRuns(out);
    if (merged[0]) merged[0].text = merged[0].text.trimStart();
    const tail = merged[merged.length - 1];
    if (tail) tail.text = tail.text.trimEnd();
    return merged.filter((run) => run.text);
  }
}
