/** CSV inputs: the uploaded file of a `file_input_id` read into tasks, by column index or header name. */
import type { Db } from 'mongodb';
import { batchCollections } from '../../core/batch/store';
import { problem } from '../../core/errors';
import type { TaskInput } from './validate';

/** Splits CSV text into rows (RFC 4180 quoting with the given delimiter and quote). */
export function parseCsv(text: string, delimiter: string, quote: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index] as string;
    if (quoted) {
      if (char === quote && text[index + 1] === quote) {
        field += quote;
        index++;
      } else if (char === quote) quoted = false;
      else field += char;
    } else if (char === quote && field.length === 0) quoted = true;
    else if (char === delimiter) {
      row.push(field);
      field = '';
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && text[index + 1] === '\n') index++;
      row.push(field);
      field = '';
      if (row.some((cell) => cell.length > 0)) rows.push(row);
      row = [];
    } else field += char;
  }
  row.push(field);
  if (row.some((cell) => cell.length > 0)) rows.push(row);
  return rows;
}

export async function parseCsvTasks(db: Db, accountId: string, inputId: string): Promise<TaskInput[]> {
  const { inputs, contents } = batchCollections(db);
  const input = await inputs.findOne({ _id: inputId });
  if (!input || input.account_id !== accountId || input.expires_at.getTime() < Date.now()) {
    throw problem('not_found', `No file input ${inputId}, or its 24-hour slot expired.`, { members: { reason: 'file_input_not_found' } });
  }
  if (!input.uploaded) throw problem('conflict', `File input ${inputId} was never uploaded: PUT the CSV to its upload URL first.`, { members: { reason: 'file_input_not_uploaded' } });
  const wanted = Array.from({ length: input.chunks }, (_, chunk) => `${inputId}:${chunk}`);
  const docs = await contents.find({ _id: { $in: wanted } }).toArray();
  const byId = new Map(docs.map((doc) => [doc._id, Buffer.from((doc.data as unknown as { buffer: Uint8Array }).buffer)]));
  const text = Buffer.concat(wanted.map((id) => byId.get(id) ?? Buffer.alloc(0))).toString('utf8');
  const rows = parseCsv(text, input.csv.delimiter, input.csv.quote);
  const header = input.csv.header ? (rows.shift() ?? []) : [];
  const column = (ref: string | number | undefined): number | undefined => {
    if (ref === undefined) return undefined;
    if (typeof ref === 'number') return ref;
    const index = header.indexOf(ref);
    if (index < 0) throw problem('invalid_argument', `The CSV has no column "${ref}".`, { members: { parameter: 'csv.fields' } });
    return index;
  };
  const urlColumn = column(input.csv.fields.url) as number;
  const idColumn = column(input.csv.fields.external_id);
  return rows.map((row) => {
    const externalId = idColumn === undefined ? undefined : row[idColumn]?.trim();
    return { url: (row[urlColumn] ?? '').trim(), ...(externalId ? { external_id: externalId } : {}) };
  });
}
