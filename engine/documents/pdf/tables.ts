/**
 * Tables on a page, found two ways: grids of ruling lines (a connected set of horizontal and vertical
 * rules; rows and columns between them), found on the whole page first, and, for tables without
 * borders, regions the reading order isolates whose lines keep their segments to the same columns
 * (order.ts asks `alignedTable` before reading a region column by column). Each table comes back as
 * one element with its box.
 */
import type { Inline } from '../model';
import { mergeRuns } from '../model';
import type { Box, Line, Rule, Run, Segment } from './types';

export interface TableElement {
  kind: 'table';
  box: Box;
  rows: Inline[][][];
}

interface Placed {
  segment: Segment;
  line: number;
}

const cluster = (values: number[], tolerance: number): number[] => {
  const sorted = [...values].sort((a, b) => a - b);
  const out: number[] = [];
  for (const value of sorted) if (out.length === 0 || value - out[out.length - 1]! > tolerance) out.push(value);
  return out;
};

/** Connected groups of rules (touching within 2 points). */
function ruleGroups(rules: Rule[]): Rule[][] {
  const parent = rules.map((_, i) => i);
  const root = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]!]!;
    return i;
  };
  const touch = (a: Rule, b: Rule) => a.x0 <= b.x1 + 2 && b.x0 <= a.x1 + 2 && a.y0 <= b.y1 + 2 && b.y0 <= a.y1 + 2;
  // Sorted by top so only rules that can touch are compared.
  const order = rules.map((_, i) => i).sort((a, b) => rules[a]!.y0 - rules[b]!.y0);
  for (let i = 0; i < order.length; i++) {
    const a = rules[order[i]!]!;
    for (let j = i + 1; j < order.length && rules[order[j]!]!.y0 <= a.y1 + 2; j++) {
      if (touch(a, rules[order[j]!]!)) parent[root(order[i]!)] = root(order[j]!);
    }
  }
  const groups = new Map<number, Rule[]>();
  rules.forEach((rule, i) => {
    const key = root(i);
    groups.set(key, [...(groups.get(key) ?? []), rule]);
  });
  return [...groups.values()];
}

export function findTables(lines: Line[], rules: Rule[], body: number): { tables: TableElement[]; used: Set<Segment> } {
  const used = new Set<Segment>();
  const tables: TableElement[] = [];
  const capped = rules.length > 5000 ? [] : rules;
  for (const group of ruleGroups(capped)) {
    const table = ruledTable(group, lines, used, body);
    if (table) tables.push(table);
  }
  return { tables, used };
}

function ruledTable(group: Rule[], lines: Line[], used: Set<Segment>, body: number): TableElement | undefined {
  const horizontal = group.filter((rule) => rule.horizontal);
  const vertical = group.filter((rule) => !rule.horizontal);
  const box: Box = { x0: Math.min(...group.map((r) => r.x0)), x1: Math.max(...group.map((r) => r.x1)), y0: Math.min(...group.map((r) => r.y0)), y1: Math.max(...group.map((r) => r.y1)) };
  if (box.x1 - box.x0 < 3 * body || box.y1 - box.y0 < body) return undefined;
  const inside: Placed[] = [];
  lines.forEach((line, index) => {
    for (const segment of line.segments) {
      const mid = segment.y + segment.size * 0.3;
      if (!used.has(segment) && mid > box.y0 && mid < box.y1 && segment.x0 >= box.x0 - 2 && segment.x1 <= box.x1 + 2) inside.push({ segment, line: index });
    }
  });
  if (inside.length < 2) return undefined;
  const ys = cluster(
    horizontal.map((r) => (r.y0 + r.y1) / 2),
    2,
  ).reverse();
  const xs = cluster(
    vertical.map((r) => (r.x0 + r.x1) / 2),
    2,
  );
  // Rows between horizontal rules when each band holds text; else each baseline is a row.
  let rowOf: (p: Placed) => number;
  let rowCount: number;
  const bands = ys.length >= 3 ? ys.slice(1).map((y, i) => ({ top: ys[i]!, bottom: y })) : [];
  const bandOf = (p: Placed) => bands.findIndex((band) => p.segment.y + p.segment.size * 0.3 < band.top && p.segment.y + p.segment.size * 0.3 > band.bottom);
  if (bands.length >= 2 && bands.every((_, i) => inside.some((p) => bandOf(p) === i))) {
    rowOf = bandOf;
    rowCount = bands.length;
  } else {
    const lineRows = [...new Set(inside.map((p) => p.line))].sort((a, b) => a - b);
    rowOf = (p) => lineRows.indexOf(p.line);
    rowCount = lineRows.length;
  }
  let columns: number[];
  if (xs.length >= 3) columns = xs;
  else {
    const aligned = columnIntervals(inside.map((p) => p.segment));
    if (aligned.length < 2) return undefined;
    columns = [box.x0, ...aligned.slice(1).map((interval, i) => (aligned[i]!.x1 + interval.x0) / 2), box.x1];
  }
  if (columns.length < 3 || rowCount < 2) return undefined;
  const grid: Run[][][] = Array.from({ length: rowCount }, () => Array.from({ length: columns.length - 1 }, () => []));
  for (const placed of inside) {
    const row = rowOf(placed);
    if (row < 0) continue;
    for (const piece of splitAtColumns(placed.segment, columns)) grid[row]![piece.column]!.push(...spaced(piece.runs));
    used.add(placed.segment);
  }
  return { kind: 'table', box, rows: grid.map((row) => row.map(cellContent)).filter((row) => row.some((cell) => cell.length > 0)) };
}

/** A segment across column boundaries (cells pdf.js joined, merged cells) is cut at the spaces nearest the boundaries. */
function splitAtColumns(segment: Segment, columns: number[]): { column: number; runs: Run[] }[] {
  const out: { column: number; runs: Run[] }[] = [];
  const columnAt = (x: number) => {
    for (let c = 0; c + 1 < columns.length; c++) if (x < columns[c + 1]!) return c;
    return columns.length - 2;
  };
  for (const run of segment.runs) {
    const first = columnAt(run.x0 + 1);
    const last = columnAt(run.x1 - 1);
    if (first === last) {
      push(out, first, run);
      continue;
    }
    const perChar = (run.x1 - run.x0) / Math.max(1, run.text.length);
    let start = 0;
    for (let c = first; c < last; c++) {
      const boundary = Math.round((columns[c + 1]! - run.x0) / perChar);
      let cut = run.text.lastIndexOf(' ', boundary);
      if (cut <= start) cut = run.text.indexOf(' ', boundary);
      if (cut <= start) break;
      push(out, c, { ...run, text: run.text.slice(start, cut) });
      start = cut + 1;
    }
    push(out, last, { ...run, text: run.text.slice(start) });
  }
  return out;
}

function push(out: { column: number; runs: Run[] }[], column: number, run: Run): void {
  const last = out[out.length - 1];
  if (last && last.column === column) last.runs.push(run);
  else out.push({ column, runs: [run] });
}

/** A cell's runs as inline content; runs keep the spaces their segments gave them. */
function cellContent(runs: Run[]): Inline[] {
  const content: Inline[] = [];
  for (const run of runs) {
    const text = run.text.replace(/\s+/g, ' ');
    if (text) content.push(run.href ? { text, href: run.href } : { text });
  }
  const merged = mergeRuns(content);
  if (merged[0]) merged[0].text = merged[0].text.trimStart();
  const tail = merged[merged.length - 1];
  if (tail) tail.text = tail.text.trimEnd();
  return merged.filter((run) => run.text);
}

/** A segment's runs for a cell that may already hold text: the first starts with a space. */
const spaced = (runs: Run[]): Run[] => runs.map((run, i) => (i === 0 ? { ...run, text: ' ' + run.text } : run));

/** Column intervals: segment x-ranges merged where they overlap. */
function columnIntervals(segments: Segment[]): { x0: number; x1: number }[] {
  const sorted = segments.map((s) => ({ x0: s.x0, x1: s.x1 })).sort((a, b) => a.x0 - b.x0);
  const out: { x0: number; x1: number }[] = [];
  for (const interval of sorted) {
    const last = out[out.length - 1];
    if (last && interval.x0 <= last.x1 + 1) last.x1 = Math.max(last.x1, interval.x1);
    else out.push({ ...interval });
  }
  return out;
}

/**
 * Prose in columns looks like a table whose lines pair up: its segments are runs of words, where a
 * table's cells are short values.
 */
function isProse(segments: Segment[]): boolean {
  const long = segments.filter((segment) => segment.text.split(' ').length >= 5).length;
  return long / segments.length > 0.25;
}

/**
 * A table without borders: lines (top first) whose segments keep to shared columns. The caller hands
 * over a region the reading order isolated, so lines of other columns are not mixed in.
 */
export function alignedTable(run: Line[]): TableElement | undefined {
  const multi = run.filter((line) => line.segments.length >= 2);
  if (multi.length < 2) return undefined;
  const segments = run.flatMap((line) => line.segments);
  const intervals = columnIntervals(segments);
  if (intervals.length < 2) return undefined;
  if (isProse(segments)) return undefined;
  // A column of running text (most of its segments sentences) is a page column beside something else.
  const proseColumn = intervals.some((interval) => {
    const inside = segments.filter((s) => s.x0 >= interval.x0 - 1 && s.x1 <= interval.x1 + 1);
    return inside.length > 0 && inside.filter((s) => s.text.split(' ').length >= 5).length / inside.length > 0.5;
  });
  if (proseColumn) return undefined;
  // Two columns of text whose lines often stand alone are a page's columns, not a table.
  if (intervals.length === 2 && (run.length - multi.length) / run.length > 0.3) return undefined;
  // Every multi-segment line must spread over at least two columns.
  const columnOf = (segment: Segment) => intervals.findIndex((interval) => segment.x0 >= interval.x0 - 1 && segment.x1 <= interval.x1 + 1);
  const rows: Run[][][] = [];
  // Leading lines all in bold are one header row, however its cells wrap.
  let header = 0;
  while (header < run.length - 1 && run[header]!.segments.every((segment) => segment.bold)) header++;
  run.forEach((line, index) => {
    const row: Run[][] = intervals.map(() => []);
    for (const segment of line.segments) row[Math.max(0, columnOf(segment))]!.push(...spaced(segment.runs));
    const continuation = rows.length > 0 && ((index < header && index > 0) || (row[0]!.length === 0 && line.segments.length < intervals.length));
    if (continuation) {
      const previous = rows[rows.length - 1]!;
      row.forEach((cell, c) => previous[c]!.push(...cell));
    } else rows.push(row);
  });
  if (rows.length < 2) return undefined;
  const box: Box = {
    x0: Math.min(...segments.map((s) => s.x0)),
    x1: Math.max(...segments.map((s) => s.x1)),
    y0: Math.min(...segments.map((s) => s.y - 0.25 * s.size)),
    y1: Math.max(...segments.map((s) => s.y + 0.85 * s.size)),
  };
  return { kind: 'table', box, rows: rows.map((row) => row.map(cellContent)) };
}
