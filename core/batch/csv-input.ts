/**
 * CSV inputs: a slot allocated for an upload (`file_input_id`), the upload stored in chunks, and the
 * uploaded file read into tasks, by column index or header name.
 */
import type { Db } from 'mongodb';
import { problem } from '../errors';
import { newUlid } from '../ids';
import { batchCollections, CONTENT_CHUNK, type JobInputDoc } from './store';
import type { TaskInput } from './task-input';

/** How long a slot waits for its upload and its job. */
const INPUT_SLOT_MS = 24 * 3_600_000;

export type CsvSettings = { delimiter?: string; quote?: string; header?: boolean; fields: { url: string | number; external_id?: string | number } };

/** Allocates a slot for an upload. */
export async function createInput(db: Db, accountId: string, csv: CsvSettings, now = new Date()): Promise<JobInputDoc> {
  const doc: JobInputDoc = {
    _id: `in_${newUlid(now.getTime()).toLowerCase()}`,
    account_id: accountId,
    csv: { delimiter: csv.delimiter ?? ',', quote: csv.quote ?? '"', header: csv.header ?? false, fields: csv.fields },
    uploaded: false,
    chunks: 0,
    created_at: now,
    expires_at: new Date(now.getTime() + INPUT_SLOT_MS),
  };
  await batchCollections(db).inputs.insertOne(doc);
  return doc;
}

/** Stores the upload of slot `inputId` (reached through its link): false when the slot is unknown or expired. */
export async function uploadInput(db: Db, inputId: string, data: Buffer): Promise<boolean> {
  const { inputs, contents } = batchCollections(db);
  const doc = await inputs.findOne({ _id: inputId });
  if (!doc || doc.expires_at.getTime() < Date.now()) return false;
  if (doc.uploaded) throw problem('conflict', 'This input was already uploaded.');
  let count = 0;
  for (let offset = 0; offset < data.length || count === 0; offset += CONTENT_CHUNK, count++) {
    await contents.replaceOne({ _id: `${doc._id}:${count}` }, { run_id: doc._id, data: data.subarray(offset, offset + CONTENT_CHUNK) }, { upsert: true });
  }
  await inputs.updateOne({ _id: doc._id, uploaded: false }, { $set: { uploaded: true, chunks: count } });
  return true;
}

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

/** The tasks of an uploaded CSV input of the account. */
export async function parseCsvTasks(db: Db, accountId: string, inputId: string): Promise<TaskInput[]> {
  const { inputs, contents } = batchCollections(db);
  const input = await inputs.findOne({ _id: inputId });
  if (!input || input.account_id !== accountId || input.expires_at.getTime() < Date.now()) {
    throw problem('file_input_not_found', `No file input ${inputId}, or its 24-hour slot expired.`, { members: { reason: 'file_input_not_found' } });
  }
  if (!input.uploaded) throw problem('file_input_not_uploaded', `File input ${inputId} was never uploaded: PUT the CSV to its upload URL first.`, { members: { reason: 'file_input_not_uploaded' } });
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
