/**
 * Data tables as GFM tables. Spans are laid out on a grid; several header rows merge into one (GFM has
 * a single header row); layout tables (nested tables, one column, `role=presentation`) are not tables
 * to a reader and return undefined so the caller renders their cells as ordinary blocks.
 */
import { type HTMLElement, isElement, tagOf } from '../dom';

interface GridCell {
  text: string;
  /** Filled by a colspan/rowspan of another cell. */
  spanned: boolean;
  header: boolean;
  align: string;
}

export type CellRenderer = (cell: HTMLElement) => string;

/** The rows of this table only: direct rows and rows of its row groups, never rows of nested tables. */
export function tableRows(table: HTMLElement): { row: HTMLElement; inHead: boolean }[] {
  const rows: { row: HTMLElement; inHead: boolean }[] = [];
  for (const child of table.childNodes) {
    if (!isElement(child)) continue;
    const tag = tagOf(child);
    if (tag === 'tr') rows.push({ row: child, inHead: false });
    else if (tag === 'thead' || tag === 'tbody' || tag === 'tfoot') {
      for (const row of child.childNodes) if (isElement(row) && tagOf(row) === 'tr') rows.push({ row, inHead: tag === 'thead' });
    }
  }
  return rows;
}

const span = (value: string | undefined, max: number): number => Math.min(Math.max(parseInt(value ?? '1', 10) || 1, 1), max);

function alignOf(cell: HTMLElement): string {
  const align = cell.getAttribute('align') ?? /text-align\s*:\s*(\w+)/i.exec(cell.getAttribute('style') ?? '')?.[1] ?? '';
  return align.toLowerCase();
}

/** Lays cells out on a grid, repeating nothing: spanned positions are marked so each use can decide. */
export function tableGrid(rows: HTMLElement[], render: CellRenderer): GridCell[][] {
  const grid: GridCell[][] = [];
  const pending = new Map<number, { cell: GridCell; left: number }>();
  for (const row of rows) {
    const line: GridCell[] = [];
    let col = 0;
    const fillPending = (): void => {
      for (let carried = pending.get(col); carried; carried = pending.get(col)) {
        line[col] = { ...carried.cell, spanned: true };
        if (--carried.left === 0) pending.delete(col);
        col++;
      }
    };
    for (const cell of row.childNodes) {
      if (!isElement(cell) || (tagOf(cell) !== 'td' && tagOf(cell) !== 'th')) continue;
      fillPending();
      const gridCell: GridCell = { text: render(cell), spanned: false, header: tagOf(cell) === 'th', align: alignOf(cell) };
      const colspan = span(cell.getAttribute('colspan'), 50);
      const rowspan = span(cell.getAttribute('rowspan'), 200);
      for (let k = 0; k < colspan; k++) {
        const placed = k === 0 ? gridCell : { ...gridCell, spanned: true };
        line[col] = placed;
        if (rowspan > 1) pending.set(col, { cell: placed, left: rowspan - 1 });
        col++;
      }
    }
    fillPending();
    grid.push(line);
  }
  return grid;
}

const SEPARATORS: ReadonlyMap<string, string> = new Map([['left', ':---'], ['center', ':---:'], ['right', '---:']]);

export function renderTable(table: HTMLElement, render: CellRenderer): string | undefined {
  if (table.getAttribute('role') === 'presentation' || table.querySelector('table')) return undefined;
  const rows = tableRows(table);
  const grid = tableGrid(rows.map((r) => r.row), render);
  const columns = grid.reduce((max, line) => Math.max(max, line.length), 0);
  if (columns < 2 || grid.length === 0) return undefined;
  // Header rows: the <thead>, else leading rows made only of <th>, else the first row.
  let headCount = rows.filter((r) => r.inHead).length;
  if (headCount === 0) while (headCount < grid.length - 1 && grid[headCount]?.every((c) => !c || c.header)) headCount++;
  headCount = Math.max(1, Math.min(headCount, grid.length));
  const cellText = (line: GridCell[] | undefined, col: number, repeatSpans: boolean): string => {
    const cell = line?.[col];
    return !cell || (cell.spanned && !repeatSpans) ? '' : cell.text;
  };
  const header: string[] = [];
  const aligns: string[] = [];
  for (let col = 0; col < columns; col++) {
    const parts: string[] = [];
    for (let r = 0; r < headCount; r++) {
      const text = cellText(grid[r], col, headCount > 1);
      if (text && parts[parts.length - 1] !== text) parts.push(text);
    }
    header.push(parts.join(' '));
    const align = grid[headCount - 1]?.[col]?.align || grid[headCount]?.[col]?.align || '';
    aligns.push(SEPARATORS.get(align) ?? '---');
  }
  const lines = [header, aligns];
  for (const line of grid.slice(headCount)) lines.push(Array.from({ length: columns }, (_v, col) => cellText(line, col, false)));
  return lines.map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

/** A cell's blocks on one line: GFM cells cannot hold line breaks, so they become `<br>`. */
export function cellLine(markdown: string): string {
  return markdown
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .join('<br>')
    .replace(/\|/g, '\\|');
}
