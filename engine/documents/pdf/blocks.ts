/**
 * Elements in reading order to blocks: lines joined into paragraphs (across line breaks and
 * hyphenation) until a gap, a change of style or a list marker; headings by size, weight or the
 * outline; list items by their bullet (a glyph, a number or a drawn shape) with nesting from the
 * marker's indentation; tables as found.
 */
import type { Block, Inline } from '../model';
import { listBlocks, mergeRuns, type FlatItem } from '../model';
import type { Element } from './order';
import type { Box, Segment } from './types';

export interface HeadingStyle {
  body: number;
  /** Heading level by font size (half-point key). */
  bySize: Map<number, number>;
  /** The level of bold lines at body size. */
  boldLevel: number;
  /** Heading level by the outline's titles (normalized). */
  byOutline: Map<string, number>;
  /** Indentations of list markers seen so far in the document, left to right: a list cut by a page break keeps its levels. */
  listIndents: number[];
}

export const sizeKey = (size: number): number => Math.round(size * 2) / 2;
export const normalizeTitle = (text: string): string => text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
export const wordCount = (text: string): number => text.split(/\s+/).filter(Boolean).length;

/** Font sizes larger than the body's, largest first, become heading levels 1 to 5; bold body text comes next. */
export function headingStyle(segments: Segment[], body: number, outline: Map<string, number>): HeadingStyle {
  const keys = new Set<number>();
  for (const segment of segments) if (segment.size >= body * 1.12 && wordCount(segment.text) <= 30) keys.add(sizeKey(segment.size));
  const sorted = [...keys].sort((a, b) => b - a).slice(0, 5);
  return { body, bySize: new Map(sorted.map((key, i) => [key, i + 1])), boldLevel: Math.min(6, sorted.length + 1), byOutline: outline, listIndents: [] };
}

function headingLevel(segment: Segment, style: HeadingStyle): number {
  const text = segment.text;
  const outlined = style.byOutline.get(normalizeTitle(text));
  if (outlined !== undefined) return outlined;
  const words = wordCount(text);
  if (words === 0 || !/\p{L}/u.test(text)) return 0;
  const bySize = style.bySize.get(sizeKey(segment.size));
  if (bySize !== undefined && words <= 30) return bySize;
  if (segment.bold && segment.size >= style.body * 0.95 && words <= 15 && !/[.,;:]$/.test(text)) return style.boldLevel;
  return 0;
}

interface Marker {
  ordered: boolean;
  start?: number;
  /** Where the marker sits: its indentation gives the nesting. */
  x: number;
  /** Characters of the segment's text the marker takes. */
  strip: number;
}

const BULLET_TEXT = /^([•◦▪▫‣⁃∙·●○■□◆◇►▸▹➢➤✓✔–—*-])\s+\S/;
const NUMBER_TEXT = /^\(?(\d{1,3}|[a-z]|[ivx]{1,5})[.)]\s+\S/;
const ROMAN: Record<string, number> = { i: 1, ii: 2, iii: 3, iv: 4, v: 5, vi: 6, vii: 7, viii: 8, ix: 9, x: 10 };

function markerOf(segment: Segment, marks: Box[]): Marker | undefined {
  const text = segment.text;
  const bullet = BULLET_TEXT.exec(text);
  if (bullet) return { ordered: false, x: segment.x0, strip: bullet[1]!.length };
  const number = NUMBER_TEXT.exec(text);
  if (number) {
    const value = number[1]!;
    const start = /^\d/.test(value) ? Number(value) : (ROMAN[value] ?? value.charCodeAt(0) - 96);
    return { ordered: true, start, x: segment.x0, strip: text.indexOf(value) + value.length + 1 };
  }
  const s = segment.size;
  const index = marks.findIndex((mark) => {
    const middle = (mark.y0 + mark.y1) / 2;
    return middle >= segment.y - 0.2 * s && middle <= segment.y + 0.8 * s && mark.x1 <= segment.x0 + 0.5 && segment.x0 - mark.x1 <= 3 * s;
  });
  if (index < 0) return undefined;
  const [mark] = marks.splice(index, 1);
  return { ordered: false, x: mark!.x0, strip: 0 };
}

/** A segment's runs as inline content, the first `strip` characters (a marker) left out. */
function content(segment: Segment, strip: number): Inline[] {
  const out: Inline[] = [];
  let skip = strip;
  for (const run of segment.runs) {
    let text = run.text;
    if (skip > 0) {
      const trimmed = text.replace(/^\s+/, '');
      const take = Math.min(skip, trimmed.length);
      text = trimmed.slice(take);
      skip -= take;
    }
    if (text) out.push(run.href ? { text, href: run.href } : { text });
  }
  if (out[0]) out[0].text = out[0].text.trimStart();
  return out;
}

const HYPHEN = /[-‐­]$/;

/** Appends a line to inline content: a hyphen at a line's end before a lower-case letter joins the word. */
export function joinLine(into: Inline[], line: Inline[]): void {
  const last = into[into.length - 1];
  const first = line[0];
  if (!first) return;
  if (last) {
    last.text = last.text.trimEnd();
    const tail = into.slice(-3).map((run) => run.text).join('');
    if (HYPHEN.test(last.text) && /^\p{Ll}/u.test(first.text.trimStart()) && /\p{L}[-‐­]$/u.test(tail)) last.text = last.text.slice(0, -1);
    else into.push({ text: ' ' });
  }
  into.push(...line);
}

const endsSentence = (text: string): boolean => /[.!?:;"”')\]]$/.test(text.trim());

interface OpenText {
  kind: 'paragraph' | 'heading';
  level: number;
  content: Inline[];
  last: Segment;
  left: number;
}

interface OpenItem {
  marker: Marker;
  content: Inline[];
  last: Segment;
  textX: number;
}

export function buildBlocks(elements: Element[], marks: Box[], style: HeadingStyle, pitch: number): Block[] {
  const blocks: Block[] = [];
  let text: OpenText | undefined;
  let items: OpenItem[] = [];
  const flushText = () => {
    if (text) {
      const inline = mergeRuns(text.content);
      if (inline.some((run) => run.text.trim())) blocks.push(text.kind === 'heading' ? { kind: 'heading', level: text.level, content: inline } : { kind: 'paragraph', content: inline });
    }
    text = undefined;
  };
  const flushList = () => {
    if (items.length > 0) blocks.push(...nestItems(items, style.listIndents, blocks.length === 0));
    items = [];
  };
  const breaks = (previous: Segment, segment: Segment): boolean => {
    const dy = previous.y - segment.y;
    if (dy < -0.5 * segment.size) return endsSentence(previous.text);
    if (Math.abs(previous.size - segment.size) > 0.6) return true;
    return dy > Math.max(1.5 * segment.size, pitch * 1.3);
  };
  for (const element of elements) {
    if (element.kind === 'table') {
      flushText();
      flushList();
      blocks.push({ kind: 'table', rows: element.rows, header: true });
      continue;
    }
    const segment = element.segment;
    let level = headingLevel(segment, style);
    // A heading's second line (a number, a short word) goes with the heading it continues.
    if (level === 0 && text?.kind === 'heading' && Math.abs(text.last.size - segment.size) < 0.5 && text.last.bold === segment.bold && !breaks(text.last, segment)) level = text.level;
    const marker = level === 0 ? markerOf(segment, marks) : undefined;
    if (marker) {
      flushText();
      const inline = content(segment, marker.strip);
      items.push({ marker, content: inline, last: segment, textX: segment.x0 + (marker.strip > 0 ? (segment.x1 - segment.x0) * (marker.strip / Math.max(1, segment.text.length)) : 0) });
      continue;
    }
    const item = items[items.length - 1];
    if (item && level === 0 && !breaks(item.last, segment) && segment.x0 >= item.marker.x + 0.5 * segment.size) {
      joinLine(item.content, content(segment, 0));
      item.last = segment;
      continue;
    }
    flushList();
    const kind = level > 0 ? 'heading' : 'paragraph';
    if (text && text.kind === kind && text.level === level && !breaks(text.last, segment) && (kind === 'paragraph' || segment.y < text.last.y)) {
      joinLine(text.content, content(segment, 0));
      text.last = segment;
      continue;
    }
    flushText();
    text = { kind, level, content: content(segment, 0), last: segment, left: segment.x0 };
  }
  flushText();
  flushList();
  return blocks;
}

/**
 * Items to nested lists: marker indentations, clustered, are the levels. A list at the top of a page
 * may go on from the page before, so its levels count from the document's outermost indentation;
 * any other list counts from its own.
 */
function nestItems(items: OpenItem[], indents: number[], pageTop: boolean): Block[] {
  for (const item of items) {
    const x = item.marker.x;
    if (!indents.some((position) => Math.abs(position - x) <= 4)) indents.push(x);
  }
  indents.sort((a, b) => a - b);
  const indexOf = (x: number) => {
    let level = 0;
    indents.forEach((position, i) => {
      if (x >= position - 4) level = i;
    });
    return level;
  };
  const base = pageTop ? 0 : Math.min(...items.map((item) => indexOf(item.marker.x)));
  const flat = items.map((item) => ({ content: mergeRuns(item.content), level: indexOf(item.marker.x) - base, ordered: item.marker.ordered, start: item.marker.start }));
  return withFlat(flat);
}

/** Lists from flat items, each carrying the group they came from, for a later join across a page break. */
export function withFlat(flat: FlatItem[]): Block[] {
  const blocks = listBlocks(flat);
  const group = { flat, count: blocks.length };
  for (const block of blocks) if (block.kind === 'list') block.group = group;
  return blocks;
}
