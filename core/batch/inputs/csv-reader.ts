/**
 * An incremental CSV reader: bytes go in as they arrive, complete rows come out, so an upload is
 * parsed a network chunk at a time between other requests instead of in one long pass over the
 * whole file. RFC 4180 quoting with the input's delimiter and quote; a UTF-8 byte order mark is
 * skipped; bytes that are not UTF-8 and a quote still open at the end are refused, naming the line.
 * A cell longer than `maxCellChars` or a row of more than `maxRowCells` cells is refused the moment it
 * passes the cap, so a file of one huge cell costs what its first bytes cost.
 */
import { StringDecoder } from 'node:string_decoder';

/** Characters of one cell: far above a URL (2,048) or an id, far below what would stall a request. */
export const CSV_MAX_CELL_CHARS = 65_536;
/** Cells of one row. */
export const CSV_MAX_ROW_CELLS = 1_000;

export class CsvError extends Error {
  constructor(
    readonly line: number,
    message: string,
    /** The cap the input passed, when it passed one. */
    readonly cap?: { limit: 'csv_cell_chars' | 'csv_row_cells'; allowed: number },
  ) {
    super(`Line ${line}: ${message}`);
    this.name = 'CsvError';
  }
}

export interface CsvRow {
  cells: string[];
  /** The line the row starts on (1-based). */
  line: number;
}

/** The index of the first byte of `bytes` that does not start a valid UTF-8 sequence, or -1. */
function firstInvalidUtf8(bytes: Buffer, complete: boolean): number {
  let index = 0;
  while (index < bytes.length) {
    const byte = bytes[index] as number;
    const length = byte < 0x80 ? 1 : byte >= 0xc2 && byte <= 0xdf ? 2 : byte >= 0xe0 && byte <= 0xef ? 3 : byte >= 0xf0 && byte <= 0xf4 ? 4 : 0;
    if (length === 0) return index;
    if (index + length > bytes.length) return complete ? index : -1;
    for (let next = 1; next < length; next++) {
      const continuation = bytes[index + next] as number;
      if ((continuation & 0xc0) !== 0x80) return index;
    }
    // Overlong forms, surrogates and code points past U+10FFFF.
    const second = bytes[index + 1] as number;
    if ((byte === 0xe0 && second < 0xa0) || (byte === 0xed && second > 0x9f) || (byte === 0xf0 && second < 0x90) || (byte === 0xf4 && second > 0x8f)) return index;
    index += length;
  }
  return -1;
}

/** Where a multi-byte sequence cut by the end of `bytes` starts (bytes.length when none is). */
function incompleteTail(bytes: Buffer): number {
  for (let back = 1; back <= 3 && back <= bytes.length; back++) {
    const byte = bytes[bytes.length - back] as number;
    if ((byte & 0xc0) === 0x80) continue;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}

export class CsvReader {
  private readonly decoder = new StringDecoder('utf8');
  /** The bytes of a sequence cut by a chunk's end, checked with the next chunk. */
  private carry = Buffer.alloc(0);
  private started = false;
  private line = 1;
  private rowLine = 1;
  private quoteLine = 1;
  private row: string[] = [];
  private field = '';
  private quoted = false;
  /** A quote just closed a quoted field (a second one is an escaped quote). */
  private closing = false;
  private pendingCr = false;

  constructor(
    private readonly delimiter: string,
    private readonly quote: string,
    private readonly caps: { maxCellChars: number; maxRowCells: number } = { maxCellChars: CSV_MAX_CELL_CHARS, maxRowCells: CSV_MAX_ROW_CELLS },
  ) {}

  /** The rows a chunk of bytes completes. Throws CsvError on bytes that are not UTF-8. */
  push(chunk: Buffer): CsvRow[] {
    const bytes = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    const bad = firstInvalidUtf8(bytes, false);
    if (bad >= 0) throw new CsvError(this.line + this.newlines(bytes.subarray(0, bad)), 'the input is not UTF-8 text (an invalid byte).');
    this.carry = Buffer.from(bytes.subarray(incompleteTail(bytes)));
    let text = this.decoder.write(chunk);
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    return this.read(text);
  }

  /** The last row, once every byte came. Throws CsvError on an unterminated quote or a cut sequence. */
  end(): CsvRow[] {
    if (this.carry.length > 0) throw new CsvError(this.line, 'the input is not UTF-8 text (it ends inside a character).');
    const rows = this.read(this.decoder.end());
    if (this.quoted) throw new CsvError(this.quoteLine, 'a quoted field is never closed (unterminated quote).');
    this.finishRow(rows);
    return rows;
  }

  private newlines(bytes: Buffer): number {
    let count = 0;
    for (const byte of bytes) if (byte === 0x0a) count++;
    return count;
  }

  private finishRow(rows: CsvRow[]): void {
    this.row.push(this.field);
    this.field = '';
    this.closing = false;
    if (this.row.some((cell) => cell.length > 0)) rows.push({ cells: this.row, line: this.rowLine });
    this.row = [];
    this.rowLine = this.line;
  }

  private cellTooLong(): CsvError {
    const { maxCellChars } = this.caps;
    return new CsvError(this.rowLine, `a cell is longer than ${maxCellChars} characters.`, { limit: 'csv_cell_chars', allowed: maxCellChars });
  }

  private nextCell(): void {
    this.row.push(this.field);
    this.field = '';
    const { maxRowCells } = this.caps;
    if (this.row.length >= maxRowCells) throw new CsvError(this.rowLine, `a row has more than ${maxRowCells} cells.`, { limit: 'csv_row_cells', allowed: maxRowCells });
  }

  private read(text: string): CsvRow[] {
    const rows: CsvRow[] = [];
    const { delimiter, quote } = this;
    const { maxCellChars } = this.caps;
    for (let index = 0; index < text.length; index++) {
      if (this.field.length > maxCellChars) throw this.cellTooLong();
      const char = text[index] as string;
      if (this.pendingCr) {
        this.pendingCr = false;
        if (char === '\n') continue;
      }
      if (this.quoted) {
        if (char === '\n') this.line++;
        if (char === quote) {
          this.quoted = false;
          this.closing = true;
        } else this.field += char;
        continue;
      }
      if (this.closing && char === quote) {
        // `""` inside a quoted field: one quote, and the field goes on quoted.
        this.field += quote;
        this.quoted = true;
        this.closing = false;
        continue;
      }
      this.closing = false;
      if (char === quote && this.field.length === 0) {
        this.quoted = true;
        this.quoteLine = this.line;
      } else if (char === delimiter) {
        this.nextCell();
      } else if (char === '\n' || char === '\r') {
        this.line++;
        if (char === '\r') this.pendingCr = true;
        this.finishRow(rows);
      } else this.field += char;
    }
    if (this.field.length > maxCellChars) throw this.cellTooLong();
    return rows;
  }
}
