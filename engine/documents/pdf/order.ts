/**
 * Reading order by recursive XY cuts: a region with a vertical gutter running its whole height is
 * read column by column; otherwise it is cut into horizontal bands, and consecutive bands that share a
 * gutter are put back together first, so two columns whose lines happen to leave a common gap are not
 * read across.
 */
import { alignedTable, type TableElement } from './tables';
import type { Box, Line, Segment } from './types';

export interface TextElement {
  kind: 'text';
  box: Box;
  segment: Segment;
}

export type Element = TextElement | TableElement;

export const textElement = (segment: Segment): TextElement => ({
  kind: 'text',
  segment,
  box: { x0: segment.x0, x1: segment.x1, y0: segment.y - 0.2 * segment.size, y1: segment.y + 0.75 * segment.size },
});

interface Gap {
  from: number;
  to: number;
}

/** Free intervals of the projection of boxes on one axis, each at least `min` wide. */
function gaps(elements: Element[], axis: 'x' | 'y', min: number): Gap[] {
  const spans = elements.map((e) => (axis === 'x' ? [e.box.x0, e.box.x1] : [e.box.y0, e.box.y1]) as [number, number]).sort((a, b) => a[0] - b[0]);
  const out: Gap[] = [];
  let reach = spans[0]![1];
  for (const [start, end] of spans.slice(1)) {
    if (start - reach >= min) out.push({ from: reach, to: start });
    reach = Math.max(reach, end);
  }
  return out;
}

export function readingOrder(elements: Element[], gutter: number): Element[] {
  const out: Element[] = [];
  cut(elements, gutter, out, 0);
  return out;
}

function cut(elements: Element[], gutter: number, out: Element[], depth: number): void {
  if (elements.length <= 1 || depth > 40) {
    out.push(...topDown(elements));
    return;
  }
  const vertical = gaps(elements, 'x', gutter);
  if (vertical.length > 0 && elements.every((e) => e.kind === 'text')) {
    const table = tableIn(elements as TextElement[]);
    if (table) {
      out.push(...topDown(table.before), table.table, ...topDown(table.after));
      return;
    }
  }
  if (vertical.length > 0) {
    const widest = vertical.reduce((a, b) => (b.to - b.from > a.to - a.from ? b : a));
    const left = elements.filter((e) => e.box.x1 <= widest.from + 0.01);
    const right = elements.filter((e) => e.box.x1 > widest.from + 0.01);
    cut(left, gutter, out, depth + 1);
    cut(right, gutter, out, depth + 1);
    return;
  }
  const bands = horizontalBands(elements);
  if (bands.length <= 1) {
    out.push(...topDown(elements));
    return;
  }
  // Consecutive bands that leave a gutter free together belong to one multi-column stretch.
  const merged: Element[][] = [];
  for (const band of bands) {
    const last = merged[merged.length - 1];
    if (last && gaps([...last, ...band], 'x', gutter).length > 0) last.push(...band);
    else merged.push([...band]);
  }
  if (merged.length === 1) {
    out.push(...topDown(elements));
    return;
  }
  for (const band of merged) cut(band, gutter, out, depth + 1);
}

/** Bands separated by free horizontal space, top first. */
function horizontalBands(elements: Element[]): Element[][] {
  const sorted = [...elements].sort((a, b) => b.box.y1 - a.box.y1);
  const bands: Element[][] = [];
  let floor = Infinity;
  for (const element of sorted) {
    if (bands.length > 0 && element.box.y1 > floor) {
      bands[bands.length - 1]!.push(element);
      floor = Math.min(floor, element.box.y0);
    } else {
      bands.push([element]);
      floor = element.box.y0;
    }
  }
  return bands;
}

const topDown = (elements: Element[]): Element[] =>
  [...elements].sort((a, b) => {
    const ay = a.kind === 'text' ? a.segment.y : a.box.y1;
    const by = b.kind === 'text' ? b.segment.y : b.box.y1;
    return Math.abs(ay - by) < 2 ? a.box.x0 - b.box.x0 : by - ay;
  });

/** Segments to lines by baseline, top first. */
function linesOf(elements: TextElement[]): Line[] {
  const sorted = [...elements].sort((a, b) => b.segment.y - a.segment.y || a.segment.x0 - b.segment.x0);
  const lines: Line[] = [];
  for (const { segment } of sorted) {
    const last = lines[lines.length - 1];
    if (last && Math.abs(last.y - segment.y) <= 0.3 * Math.max(last.size, segment.size)) {
      last.segments.push(segment);
      last.size = Math.max(last.size, segment.size);
    } else lines.push({ segments: [segment], y: segment.y, size: segment.size });
  }
  for (const line of lines) line.segments.sort((a, b) => a.x0 - b.x0);
  return lines;
}

/** A borderless table filling the region, lone lines above and below it (a caption, a note) set apart. */
function tableIn(elements: TextElement[]): { table: TableElement; before: Element[]; after: Element[] } | undefined {
  const lines = linesOf(elements);
  let start = 0;
  let end = lines.length;
  while (start < end && lines[start]!.segments.length < 2) start++;
  while (end > start && lines[end - 1]!.segments.length < 2) end--;
  if (end - start < 2) return undefined;
  const table = alignedTable(lines.slice(start, end));
  if (!table) return undefined;
  const element = (line: Line) => line.segments.map(textElement);
  return { table, before: lines.slice(0, start).flatMap(element), after: lines.slice(end).flatMap(element) };
}
