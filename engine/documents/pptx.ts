/**
 * PPTX read from its XML: slides in presentation order, a heading per slide from its title
 * placeholder, text boxes as paragraphs, bulleted or numbered paragraphs as lists nested by level,
 * tables, links, and the speaker notes when asked.
 */
import { documentError } from './failures';
import type { Block, DocumentModel, Inline } from './model';
import { listBlocks, mergeRuns } from './model';
import { ooxmlInfo, relationships, requireXml, readXml, type ReadContext, type Relationship } from './ooxml';
import type { DocumentInfo } from './types';
import { elements, find, first, isElement, type XmlElement } from './xml';
import type { ZipArchive } from './zip';

export async function readPptx(zip: ZipArchive, context: ReadContext): Promise<{ model: DocumentModel; info: DocumentInfo }> {
  const presentation = first(requireXml(zip, 'ppt/presentation.xml', context.limits), 'p:presentation');
  const rels = relationships(zip, 'ppt/presentation.xml', context.limits);
  const slideIds = elements(first(presentation, 'p:sldIdLst') ?? { name: '', attrs: {}, children: [] }, 'p:sldId');
  if (slideIds.length > context.limits.maxPages) throw documentError('document_too_large', 'slides', `The presentation has more than ${context.limits.maxPages} slides.`);
  const pages: Block[][] = [];
  for (const id of slideIds) {
    const part = rels.get(id.attrs['r:id'] ?? '');
    if (!part || part.external) continue;
    const slide = readXml(zip, part.target, context.limits);
    if (!slide) continue;
    const slideRels = relationships(zip, part.target, context.limits);
    const blocks = slideBlocks(first(slide, 'p:sld'), slideRels);
    if (context.speakerNotes) {
      const notesRel = [...slideRels.values()].find((rel) => rel.type.endsWith('/notesSlide') && !rel.external);
      const notes = notesRel ? readXml(zip, notesRel.target, context.limits) : undefined;
      const notesBlocks = notes ? notesText(first(notes, 'p:notes'), relationships(zip, notesRel!.target, context.limits)) : [];
      if (notesBlocks.length > 0) blocks.push({ kind: 'heading', level: 3, content: [{ text: 'Notes' }] }, ...notesBlocks);
    }
    pages.push(blocks);
  }
  return { model: { pages, paged: true, unit: 'slide' }, info: ooxmlInfo(zip, 'pptx', context.limits, pages.length) };
}

type Links = Map<string, Relationship>;

interface Shape {
  kind: 'title' | 'body' | 'text' | 'table';
  node: XmlElement;
}

/** Shapes of a tree in document order, groups opened (iteratively: groups can nest). */
function shapes(tree: XmlElement | undefined): Shape[] {
  const out: Shape[] = [];
  if (!tree) return out;
  const ordered: XmlElement[] = [];
  const stack: { node: XmlElement; next: number }[] = [{ node: tree, next: 0 }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    const child = top.node.children[top.next++];
    if (child === undefined) {
      stack.pop();
      continue;
    }
    if (!isElement(child)) continue;
    if (child.name === 'p:grpSp') stack.push({ node: child, next: 0 });
    else if (child.name === 'p:sp' || child.name === 'p:graphicFrame') ordered.push(child);
  }
  for (const node of ordered) {
    if (node.name === 'p:graphicFrame') {
      if (find(node, 'a:tbl')) out.push({ kind: 'table', node });
      continue;
    }
    const placeholder = find(first(node, 'p:nvSpPr'), 'p:ph');
    const type = placeholder?.attrs.type;
    if (type === 'title' || type === 'ctrTitle') out.push({ kind: 'title', node });
    else if (placeholder && (type === undefined || type === 'body' || type === 'obj' || type === 'subTitle')) out.push({ kind: type === 'subTitle' ? 'text' : 'body', node });
    // Slide numbers, dates, footers and headers are furniture.
    else if (!placeholder) out.push({ kind: 'text', node });
  }
  return out;
}

function slideBlocks(slide: XmlElement | undefined, links: Links): Block[] {
  const all = shapes(find(slide, 'p:spTree'));
  const blocks: Block[] = [];
  const titles = all.filter((shape) => shape.kind === 'title');
  for (const title of titles) {
    const text = paragraphs(title.node, links, false).map((p) => p.content.map((run) => run.text).join('')).join(' ').trim();
    if (text) blocks.push({ kind: 'heading', level: 2, content: [{ text }] });
  }
  for (const shape of all) {
    if (shape.kind === 'title') continue;
    if (shape.kind === 'table') blocks.push(tableBlock(shape.node, links));
    else blocks.push(...textBlocks(paragraphs(shape.node, links, shape.kind === 'body')));
  }
  return blocks;
}

function notesText(notes: XmlElement | undefined, links: Links): Block[] {
  const blocks: Block[] = [];
  for (const shape of shapes(find(notes, 'p:spTree'))) {
    const placeholder = find(first(shape.node, 'p:nvSpPr'), 'p:ph');
    if (placeholder?.attrs.type !== 'body') continue;
    blocks.push(...textBlocks(paragraphs(shape.node, links, false)));
  }
  return blocks;
}

interface Paragraph {
  content: Inline[];
  level: number;
  bullet: 'none' | 'bullet' | 'number';
  start?: number;
}

/** A shape's paragraphs; in body placeholders a paragraph is a bullet unless it says otherwise. */
function paragraphs(shape: XmlElement, links: Links, bulletsByDefault: boolean): Paragraph[] {
  const body = first(shape, 'p:txBody') ?? first(shape, 'a:txBody');
  if (!body) return [];
  const out: Paragraph[] = [];
  for (const p of elements(body, 'a:p')) {
    const props = first(p, 'a:pPr');
    const level = Math.min(8, Number(props?.attrs.lvl ?? 0) || 0);
    let bullet: Paragraph['bullet'] = bulletsByDefault ? 'bullet' : 'none';
    let start: number | undefined;
    if (first(props, 'a:buNone')) bullet = 'none';
    else if (first(props, 'a:buChar')) bullet = 'bullet';
    const autoNumber = first(props, 'a:buAutoNum');
    if (autoNumber) {
      bullet = 'number';
      start = Number(autoNumber.attrs.startAt ?? 1) || 1;
    }
    const content = mergeRuns(runs(p, links));
    if (content.map((run) => run.text).join('').trim()) out.push({ content, level, bullet, start });
  }
  return out;
}

function runs(p: XmlElement, links: Links): Inline[] {
  const out: Inline[] = [];
  for (const child of p.children) {
    if (!isElement(child)) continue;
    if (child.name === 'a:br') out.push({ text: ' ' });
    if (child.name !== 'a:r' && child.name !== 'a:fld') continue;
    const props = first(child, 'a:rPr');
    const text = elements(child, 'a:t')
      .map((t) => t.children.filter((node): node is string => typeof node === 'string').join(''))
      .join('');
    if (!text) continue;
    const link = first(props, 'a:hlinkClick')?.attrs['r:id'];
    const target = link ? links.get(link) : undefined;
    const run: Inline = { text };
    if (target?.external) run.href = target.target;
    if (props?.attrs.b === '1') run.bold = true;
    if (props?.attrs.i === '1') run.italic = true;
    out.push(run);
  }
  return out;
}

/** Paragraphs as blocks: runs of list paragraphs become one list, nested by their levels. */
export function textBlocks(items: Paragraph[]): Block[] {
  const blocks: Block[] = [];
  let i = 0;
  while (i < items.length) {
    const item = items[i]!;
    if (item.bullet === 'none') {
      blocks.push({ kind: 'paragraph', content: item.content });
      i++;
      continue;
    }
    let end = i;
    while (end < items.length && items[end]!.bullet !== 'none') end++;
    blocks.push(...listBlocks(items.slice(i, end).map((p) => ({ content: p.content, level: p.level, ordered: p.bullet === 'number', start: p.start }))));
    i = end;
  }
  return blocks;
}

function tableBlock(frame: XmlElement, links: Links): Block {
  const table = find(frame, 'a:tbl')!;
  const rows: Inline[][][] = [];
  for (const tr of elements(table, 'a:tr')) {
    const row: Inline[][] = [];
    for (const tc of elements(tr, 'a:tc')) {
      if (tc.attrs.hMerge === '1' || tc.attrs.vMerge === '1') {
        row.push([]);
        continue;
      }
      const cell: Inline[] = [];
      for (const paragraph of paragraphs(tc, links, false)) {
        if (cell.length > 0) cell.push({ text: ' ' });
        cell.push(...paragraph.content);
      }
      row.push(mergeRuns(cell));
    }
    rows.push(row);
  }
  return { kind: 'table', rows, header: true };
}
