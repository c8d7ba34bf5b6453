/**
 * Data tables as JSON. With a header row, each row is an object keyed by the column headings; without
 * one, each row is an array of cell texts. Layout tables (nested tables, `role=presentation`, a single
 * column) are skipped; a first row that is one cell across the whole table is taken as the caption.
 */
import { type HTMLElement, isElement, tagOf, visibleText } from '../dom';
import { tableGrid, tableRows } from '../markdown/table';
import type { Page } from './page';

export interface TableOutput {
  caption?: string;
  dimensions: { rows: number; columns: number };
  /** Column headings; empty when the table has no header row. */
  headings: string[];
  rows: Record<string, string>[] | string[][];
}

/** Headings usable as object keys: blanks named by position, repeats numbered. */
function uniqueKeys(headings: string[]): string[] {
  const used = new Map<string, number>();
  return headings.map((heading, i) => {
    const base = heading || `column_${i + 1}`;
    const count = (used.get(base) ?? 0) + 1;
    used.set(base, count);
    return count === 1 ? base : `${base} (${count})`;
  });
}

function readTable(table: HTMLElement): TableOutput | undefined {
  if (table.getAttribute('role') === 'presentation' || table.querySelector('table')) return undefined;
  const rows = tableRows(table);
  const grid = tableGrid(
    rows.map((r) => r.row),
    (cell) => visibleText(cell),
  );
  const columns = grid.reduce((max, line) => Math.max(max, line.length), 0);
  if (columns < 2) return undefined;
  const captionEl = table.childNodes.find((child): child is HTMLElement => isElement(child) && tagOf(child) === 'caption');
  let caption = captionEl ? visibleText(captionEl) || undefined : undefined;
  let start = 0;
  const first = grid[0];
  if (first && first.length === columns && first.slice(1).every((cell) => cell?.spanned) && grid.length > 1) {
    caption ??= first[0]?.text;
    start = 1;
  }
  const headRows = rows.slice(start).findIndex((r, i) => !(r.inHead || grid[start + i]?.every((cell) => !cell || cell.header)));
  const headCount = Math.max(0, headRows === -1 ? grid.length - start - 1 : headRows);
  const text = (line: (typeof grid)[number] | undefined, col: number, repeat: boolean): string => {
    const cell = line?.[col];
    return !cell || (cell.spanned && !repeat) ? '' : cell.text;
  };
  const body = grid.slice(start + headCount).map((line) => Array.from({ length: columns }, (_v, col) => text(line, col, false)));
  const output: TableOutput = { ...(caption ? { caption } : {}), dimensions: { rows: body.length, columns }, headings: [], rows: body };
  if (headCount > 0) {
    const headings = Array.from({ length: columns }, (_v, col) => {
      const parts: string[] = [];
      for (let r = start; r < start + headCount; r++) {
        const part = text(grid[r], col, headCount > 1);
        if (part && parts[parts.length - 1] !== part) parts.push(part);
      }
      return parts.join(' ');
    });
    const keys = uniqueKeys(headings);
    output.headings = headings;
    output.rows = body.map((cells) => Object.fromEntries(keys.map((key, col) => [key, cells[col] ?? ''])));
  }
  return output;
}

export function tables(page: Page): TableOutput[] {
  return page.root.querySelectorAll('table').flatMap((table) => readTable(table) ?? []);
}
