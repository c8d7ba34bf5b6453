/**
 * PDF to the document model: pages read one at a time through pdf.js; running headers and footers
 * dropped; tables, reading order, headings, lists and paragraphs per page; a paragraph that runs on to
 * the next page joined to its start; pages that paint images but have no text reported as scans.
 */
import { documentError } from '../failures';
import type { Block, Inline } from '../model';
import type { ReadContext } from '../ooxml';
import type { DocumentInfo } from '../types';
import { buildBlocks, headingStyle, joinLine, normalizeTitle, withFlat } from './blocks';
import { bodySize, buildLines } from './lines';
import { openPdf, readPage, type PdfDocument } from './load';
import { readingOrder, textElement, type Element } from './order';
import { findTables } from './tables';
import type { Line, RawPage } from './types';

/** A file without `%%EOF` near its end was cut short: pdf.js would guess at what is missing. */
function checkComplete(bytes: Buffer): void {
  const tail = bytes.subarray(Math.max(0, bytes.length - 65536));
  if (tail.indexOf('%%EOF') < 0) throw documentError('document_unreadable', 'pdf_truncated', 'The PDF is truncated: it lacks its end-of-file marker.');
}

export async function readPdf(bytes: Buffer, context: ReadContext): Promise<{ model: { pages: Block[][]; paged: true }; info: DocumentInfo }> {
  checkComplete(bytes);
  const { lib, doc } = await openPdf(bytes);
  try {
    const { limits } = context;
    if (doc.numPages > limits.maxPages) throw documentError('document_too_large', 'pages', `The PDF has more than ${limits.maxPages} pages.`);
    const outline = await outlineLevels(doc);
    const raw: RawPage[] = [];
    let chars = 0;
    for (let number = 1; number <= doc.numPages; number++) {
      const page = await readPage(lib, doc, number);
      for (const run of page.runs) chars += run.text.length;
      if (chars > limits.maxTextChars) throw documentError('document_too_large', 'text', 'The PDF holds more text than the service returns.');
      raw.push(page);
    }
    const body = bodySize(raw.flatMap((page) => page.runs));
    const lines = raw.map((page) => buildLines(page.runs, page.rules, page.links, body));
    dropRunningLines(raw, lines);
    const all = lines.flat();
    const style = headingStyle(
      all.flatMap((line) => line.segments),
      body,
      outline,
    );
    const pitch = linePitch(all, body);
    const pages = raw.map((page, i) => {
      const pageLines = lines[i]!;
      const { tables, used } = findTables(pageLines, page.rules, body);
      const elements: Element[] = [...tables];
      for (const line of pageLines) for (const segment of line.segments) if (!used.has(segment)) elements.push(textElement(segment));
      return buildBlocks(readingOrder(elements, 0.8 * body), [...page.marks], style, pitch);
    });
    joinAcrossPages(pages);
    const info = await metadata(doc, raw);
    return { model: { pages, paged: true }, info };
  } finally {
    await doc.destroy().catch(() => undefined);
  }
}

/** Outline titles (bookmarks) by level, for headings styled like body text. */
async function outlineLevels(doc: PdfDocument): Promise<Map<string, number>> {
  const levels = new Map<string, number>();
  const outline = await doc.getOutline().catch(() => null);
  if (!outline) return levels;
  const stack: { items: typeof outline; depth: number }[] = [{ items: outline, depth: 1 }];
  let seen = 0;
  while (stack.length > 0 && seen < 10_000) {
    const { items, depth } = stack.pop()!;
    for (const item of items) {
      seen++;
      const title = normalizeTitle(String(item.title ?? ''));
      if (title && !levels.has(title)) levels.set(title, Math.min(6, depth));
      if (item.items?.length && depth < 6) stack.push({ items: item.items, depth: depth + 1 });
    }
  }
  return levels;
}

const runningKey = (text: string): string => text.toLowerCase().replace(/\d+/g, '#').replace(/\s+/g, ' ').trim();
const PAGE_NUMBER = /^(?:page )?#(?: (?:of|\/) #)?$|^- # -$|^#$/;

/** Lines in the top or bottom margin that repeat on most pages (digits aside), and bare page numbers there. */
function dropRunningLines(pages: RawPage[], lines: Line[][]): void {
  const inMargin = (page: RawPage, line: Line) => {
    const band = 0.09 * (page.top - page.bottom);
    return line.y > page.top - band || line.y < page.bottom + band;
  };
  const counts = new Map<string, number>();
  pages.forEach((page, i) => {
    const keys = new Set(lines[i]!.filter((line) => inMargin(page, line)).map((line) => runningKey(line.segments.map((s) => s.text).join(' '))));
    for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  });
  // Running heads are short; a long line that repeats is text that repeats.
  const repeated = (key: string) => PAGE_NUMBER.test(key) || (pages.length >= 3 && key.split(' ').length <= 12 && (counts.get(key) ?? 0) >= Math.max(3, pages.length * 0.5));
  pages.forEach((page, i) => {
    lines[i] = lines[i]!.filter((line) => !(inMargin(page, line) && repeated(runningKey(line.segments.map((s) => s.text).join(' ')))));
  });
}

/** The usual distance between baselines of body lines, from the most common step. */
function linePitch(lines: Line[], body: number): number {
  const counts = new Map<number, number>();
  for (let i = 1; i < lines.length; i++) {
    const step = lines[i - 1]!.y - lines[i]!.y;
    if (Math.abs(lines[i]!.size - body) > 0.6 || step < body * 0.9 || step > body * 2.5) continue;
    const key = Math.round(step * 4) / 4;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  let best = body * 1.2;
  let most = 0;
  for (const [step, count] of counts) {
    if (count > most) {
      best = step;
      most = count;
    }
  }
  return best;
}

/**
 * What a page break cut is made whole: a paragraph (no sentence end, the next page going on in lower
 * case), a list (its items joined again, levels kept), a list item whose text goes on at the top of the
 * next page. Joins chain: a page emptied by them hands on to the next.
 */
function joinAcrossPages(pages: Block[][]): void {
  // The page whose last block the next page's first block may continue.
  let at = -1;
  for (let i = 0; i < pages.length; i++) {
    const page = pages[i]!;
    while (at >= 0 && page.length > 0) {
      const before = pages[at]!;
      const last = before[before.length - 1];
      const next = page[0];
      if (last?.kind === 'list' && next?.kind === 'list' && last.group && next.group) {
        const group = last.group;
        const after = next.group;
        before.splice(before.length - group.count, group.count, ...withFlat([...group.flat, ...after.flat]));
        page.splice(0, after.count);
        continue;
      }
      const item = last?.kind === 'list' && last.group ? last.group.flat[last.group.flat.length - 1] : undefined;
      if (last?.kind === 'list' && last.group && item && next?.kind === 'paragraph' && continues(item.content, next.content)) {
        joinLine(item.content, next.content);
        before.splice(before.length - last.group.count, last.group.count, ...withFlat(last.group.flat));
        page.shift();
        continue;
      }
      if (last?.kind === 'paragraph' && next?.kind === 'paragraph' && continues(last.content, next.content)) {
        joinLine(last.content, next.content);
        page.shift();
        continue;
      }
      break;
    }
    if (page.length > 0) at = i;
  }
}

/** Text that does not end a sentence, followed on the next page by text going on in lower case. */
function continues(before: Inline[], after: Inline[]): boolean {
  const tail = before.map((run) => run.text).join('').trim();
  const head = after.map((run) => run.text).join('').trim();
  return !/[.!?:;"”]$/.test(tail) && /^\p{Ll}/u.test(head);
}

/** `D:YYYYMMDDHHmmSS+HH'mm'` (every part after the year optional) as ISO 8601. */
export function pdfDate(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const match = /^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?([Zz+-])?(\d{2})?'?(\d{2})?/.exec(value.trim());
  if (!match) return null;
  const [, year, month = '01', day = '01', hour = '00', minute = '00', second = '00', sign, offsetHours = '00', offsetMinutes = '00'] = match;
  const zone = !sign || sign.toUpperCase() === 'Z' ? 'Z' : `${sign}${offsetHours}:${offsetMinutes}`;
  const time = Date.parse(`${year}-${month}-${day}T${hour}:${minute}:${second}${zone}`);
  return Number.isFinite(time) ? new Date(time).toISOString() : null;
}

async function metadata(doc: PdfDocument, pages: RawPage[]): Promise<DocumentInfo> {
  const meta = await doc.getMetadata().catch(() => undefined);
  const info = (meta?.info ?? {}) as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === 'string' && value.trim() ? value.trim() : null);
  return {
    format: 'pdf',
    pages: doc.numPages,
    title: text(info.Title),
    author: text(info.Author),
    created: pdfDate(info.CreationDate),
    modified: pdfDate(info.ModDate),
    pagesWithoutText: pages.filter((page) => page.runs.length === 0 && page.hasImages).map((page) => page.number),
  };
}
