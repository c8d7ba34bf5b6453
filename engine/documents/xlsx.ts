/**
 * XLSX through exceljs: one table per sheet under the sheet's name as a heading, formulas as their
 * computed values, empty rows and columns around the data trimmed. exceljs reads the repacked XML
 * parts, so the zip caps hold for it too.
 */
import ExcelJS from 'exceljs';
import { documentError } from './failures';
import type { Block, DocumentModel, Inline } from './model';
import { ooxmlInfo, repackXmlParts, type ReadContext } from './ooxml';
import type { DocumentInfo } from './types';
import type { ZipArchive } from './zip';

export async function readXlsx(zip: ZipArchive, context: ReadContext): Promise<{ model: DocumentModel; info: DocumentInfo }> {
  if (!zip.has('xl/workbook.xml')) throw documentError('document_unreadable', 'ooxml_missing_part', 'The file is not a spreadsheet.');
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(repackXmlParts(zip, context.limits) as unknown as ArrayBuffer);
  const pages: Block[][] = [];
  let cells = 0;
  if (workbook.worksheets.length > context.limits.maxPages) throw documentError('document_too_large', 'sheets', `The workbook has more than ${context.limits.maxPages} sheets.`);
  for (const sheet of workbook.worksheets) {
    const grid: Inline[][][] = [];
    sheet.eachRow({ includeEmpty: false }, (row, rowNumber) => {
      row.eachCell({ includeEmpty: false }, (cell, column) => {
        if (++cells > context.limits.maxCells) throw documentError('document_too_large', 'cells', `The workbook has more than ${context.limits.maxCells} cells.`);
        const content = cellContent(cell.value);
        if (content.length === 0) return;
        const line = (grid[rowNumber - 1] ??= []);
        line[column - 1] = content;
      });
    });
    pages.push([{ kind: 'heading', level: 2, content: [{ text: sheet.name }] }, ...sheetTable(grid)]);
  }
  return { model: { pages, paged: false }, info: ooxmlInfo(zip, 'xlsx', context.limits, workbook.worksheets.length) };
}

/** The occupied rectangle of a sparse grid as one table; a sheet with nothing in it gives none. */
export function sheetTable(grid: Inline[][][]): Block[] {
  let top = Infinity;
  let bottom = -1;
  let left = Infinity;
  let right = -1;
  grid.forEach((row, r) => {
    if (!row) return;
    row.forEach((cell, c) => {
      if (!cell) return;
      top = Math.min(top, r);
      bottom = Math.max(bottom, r);
      left = Math.min(left, c);
      right = Math.max(right, c);
    });
  });
  if (bottom < 0) return [];
  const rows: Inline[][][] = [];
  for (let r = top; r <= bottom; r++) {
    const row: Inline[][] = [];
    for (let c = left; c <= right; c++) row.push(grid[r]?.[c] ?? []);
    // Empty rows inside the data are kept out: they only split a table in two when rendered.
    if (row.some((cell) => cell.length > 0)) rows.push(row);
  }
  return [{ kind: 'table', rows, header: true }];
}

function cellContent(value: ExcelJS.CellValue): Inline[] {
  if (value === null || value === undefined) return [];
  if (value instanceof Date) return [{ text: formatDate(value) }];
  if (typeof value !== 'object') return textRun(String(value));
  if ('richText' in value) return textRun(value.richText.map((part) => part.text).join(''));
  if ('hyperlink' in value) {
    const text = typeof value.text === 'string' ? value.text : cellContent(value.text as ExcelJS.CellValue).map((run) => run.text).join('');
    return text ? [{ text, href: value.hyperlink }] : [];
  }
  if ('error' in value) return textRun(String(value.error));
  if ('result' in value || 'formula' in value || 'sharedFormula' in value) {
    const result = (value as { result?: unknown }).result;
    if (result === undefined || result === null) return [];
    if (result instanceof Date) return [{ text: formatDate(result) }];
    if (typeof result === 'object' && result !== null && 'error' in result) return textRun(String((result as { error: unknown }).error));
    return textRun(String(result));
  }
  return [];
}

const textRun = (text: string): Inline[] => {
  const trimmed = text.replace(/\s+/g, ' ').trim();
  return trimmed ? [{ text: trimmed }] : [];
};

/** A date cell as the calendar date (and time when it has one), in UTC as spreadsheets store it. */
function formatDate(date: Date): string {
  if (!Number.isFinite(date.getTime())) return '';
  const iso = date.toISOString();
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.slice(0, 19).replace('T', ' ');
}
