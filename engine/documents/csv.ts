/** CSV (RFC 4180, with the delimiter guessed from the first line among comma, semicolon and tab) as one table. */
import { documentError } from './failures';
import type { DocumentModel, Inline } from './model';
import type { DocumentInfo, DocumentLimits } from './types';
import { sheetTable } from './xlsx';

export function readCsv(bytes: Buffer, limits: DocumentLimits): { model: DocumentModel; info: DocumentInfo } {
  let text = new TextDecoder('utf-8').decode(bytes);
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const firstLine = text.slice(0, Math.max(0, text.indexOf('\n')) || text.length);
  const delimiter = [',', ';', '\t'].map((ch) => ({ ch, count: firstLine.split(ch).length })).sort((a, b) => b.count - a.count)[0]!.ch;
  const grid: Inline[][][] = [];
  let row: Inline[][] = [];
  let field = '';
  let quoted = false;
  let cells = 0;
  const endField = () => {
    if (++cells > limits.maxCells) throw documentError('document_too_large', 'cells', `The file has more than ${limits.maxCells} cells.`);
    const value = field.trim();
    row.push(value ? [{ text: value.replace(/\s+/g, ' ') }] : []);
    field = '';
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"' && field.trim() === '') {
      quoted = true;
      field = '';
    } else if (ch === delimiter) endField();
    else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      endField();
      grid.push(row);
      row = [];
    } else field += ch;
  }
  if (field !== '' || row.length > 0) {
    endField();
    grid.push(row);
  }
  return {
    model: { pages: [sheetTable(grid)], paged: false },
    info: { format: 'csv', pages: null, title: null, author: null, created: null, modified: null, pagesWithoutText: [] },
  };
}
