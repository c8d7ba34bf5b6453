/** The CSV reader's caps: a cell or a row past its cap is refused while it arrives, naming the cap. */
import { expect } from 'chai';
import { CSV_MAX_CELL_CHARS, CSV_MAX_ROW_CELLS, CsvError, CsvReader } from '../../../core/batch/inputs/csv-reader';

/** Feeds `chunks` to a reader; the rows read and, if it refused, the error and the chunks it took. */
function feed(reader: CsvReader, chunks: Iterable<Buffer>): { rows: string[][]; error?: CsvError; taken: number } {
  const rows: string[][] = [];
  let taken = 0;
  try {
    for (const chunk of chunks) {
      taken++;
      rows.push(...reader.push(chunk).map((row) => row.cells));
    }
    rows.push(...reader.end().map((row) => row.cells));
    return { rows, taken };
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    return { rows, error, taken };
  }
}

function* repeated(text: string, chunkBytes: number, totalBytes: number): Generator<Buffer> {
  const chunk = Buffer.from(text.repeat(Math.ceil(chunkBytes / text.length)).slice(0, chunkBytes));
  for (let sent = 0; sent < totalBytes; sent += chunk.length) yield chunk;
}

describe('CSV reader caps', () => {
  it('refuses a 42 MB cell within the first chunks after the cap, naming the cap and the line', () => {
    const chunks = repeated('a', 64 * 1024, 42 * 1024 * 1024);
    const { error, taken } = feed(new CsvReader(',', '"'), (function* () {
      yield Buffer.from('url\nhttp://a.test/1\n');
      yield* chunks;
    })());
    expect(error?.cap).to.deep.equal({ limit: 'csv_cell_chars', allowed: CSV_MAX_CELL_CHARS });
    expect(error?.line).to.equal(3);
    expect(error?.message).to.contain(String(CSV_MAX_CELL_CHARS));
    // 64 KiB chunks: the cap (64 Ki characters) is passed in the second one of the cell.
    expect(taken).to.be.at.most(3);
  });

  it('refuses a quoted cell past the cap the same way, and reads one exactly at the cap', () => {
    const quoted = feed(new CsvReader(',', '"'), [Buffer.from(`"${'q'.repeat(CSV_MAX_CELL_CHARS)}`), Buffer.from('q"\n')]);
    expect(quoted.error?.cap?.limit).to.equal('csv_cell_chars');
    const exact = feed(new CsvReader(',', '"'), [Buffer.from(`x,"${'e'.repeat(CSV_MAX_CELL_CHARS - 1)}`), Buffer.from('e"\nnext\n')]);
    expect(exact.error).to.equal(undefined);
    expect(exact.rows.map((row) => row.map((cell) => cell.length))).to.deep.equal([[1, CSV_MAX_CELL_CHARS], [4]]);
  });

  it(`refuses a row of more than ${CSV_MAX_ROW_CELLS} cells, and reads one of exactly that many`, () => {
    const exact = feed(new CsvReader(',', '"'), [Buffer.from(`${Array.from({ length: CSV_MAX_ROW_CELLS }, (_, n) => n).join(',')}\n`)]);
    expect(exact.error).to.equal(undefined);
    expect(exact.rows[0]).to.have.length(CSV_MAX_ROW_CELLS);
    const wide = feed(new CsvReader(';', '"'), [Buffer.from('a\nb\n'), Buffer.from(';'.repeat(5_000_000))]);
    expect(wide.error?.cap).to.deep.equal({ limit: 'csv_row_cells', allowed: CSV_MAX_ROW_CELLS });
    expect(wide.error?.line).to.equal(3);
    expect(wide.rows).to.deep.equal([['a'], ['b']]);
  });
});
