/**
 * CSV inputs of Batch jobs: allocated under the plan's limits, uploaded through a capability link and
 * read as they arrive (csv-reader.ts), so no request holds the event loop for a whole file, and kept in
 * their parsed form: a job made from an input (again and again) reads its tasks back, never the CSV.
 *
 *   batch_job_inputs  the input: its CSV options, `bytes`, `tasks`, `parts`, or `refusal`
 *   blob store        `<input id>:p<n>` one JSON array of up to PART_TASKS tasks each, owned by the
 *                     input (core/jobs/blobs.ts); tasks.ts reads them back
 */
import type { Principal } from '../../accounts';
import { quotaExceeded } from '../../accounts/limits';
import { problem } from '../../../base/errors';
import { newUlid } from '../../../base/ids';
import { Blobs, type BlobOwner } from '../../jobs/blobs';
import type { BatchStore, JobInputDoc } from '../store';
import { CsvError, CsvReader } from './csv-reader';

/** A job holds at most this many tasks, so an input past it is refused while it arrives. */
const MAX_ROWS = 100_000;
/** Tasks per stored part: a part is parsed in a few milliseconds when read back. */
const PART_TASKS = 5_000;
const INPUT_TTL_MS = 24 * 3_600_000;

const inputOwner = (inputId: string): BlobOwner => ({ kind: 'batch_input', id: inputId });
/** The blob of an input's part `n`. */
export const partBlob = (inputId: string, n: number): string => `${inputId}:p${n}`;

export interface InputTask {
  url: string;
  external_id?: string;
}

export type CsvOptions = JobInputDoc['csv'];

/**
 * The bytes of the inputs `ids` still stored (not expired) other than `except`. The ids are the
 * holders of the account's `stored_inputs` slots (every input it holds has one): read by key, since on
 * FerretDB a filter on the account would read every account's inputs.
 */
async function bytesHeld(store: BatchStore, ids: string[], except: string): Promise<number> {
  const others = ids.filter((id) => id !== except);
  if (others.length === 0) return 0;
  const docs = await store.inputs.find({ _id: { $in: others } }, { projection: { bytes: 1, expires_at: 1 } }).toArray();
  const now = Date.now();
  return docs.reduce((sum, doc) => sum + (doc.expires_at.getTime() > now ? (doc.bytes ?? 0) : 0), 0);
}

/** A new input's id. */
export const newInputId = (now = Date.now()): string => `in_${newUlid(now).toLowerCase()}`;

/** Of the inputs `ids`, which are still stored (an expired one no longer counts against `stored_inputs`). */
export async function inputStates(store: BatchStore, ids: string[]): Promise<Map<string, 'live' | 'ended'>> {
  const docs = await store.inputs.find({ _id: { $in: ids } }, { projection: { expires_at: 1 } }).toArray();
  const now = Date.now();
  return new Map(docs.map((doc) => [doc._id, doc.expires_at.getTime() > now ? 'live' : 'ended']));
}

/**
 * Allocates input `id`, within one of the account's `stored_inputs` slots its caller took (the slots
 * are the count); the upload comes through its link.
 */
export async function allocateInput(store: BatchStore, principal: Pick<Principal, 'accountId'>, csv: CsvOptions, id = newInputId(), now = new Date()): Promise<JobInputDoc> {
  const doc: JobInputDoc = {
    _id: id,
    account_id: principal.accountId,
    csv,
    uploaded: false,
    created_at: now,
    expires_at: new Date(now.getTime() + INPUT_TTL_MS),
  };
  await store.inputs.insertOne(doc);
  return doc;
}

const tooLarge = (maxBytes: number) =>
  problem('payload_too_large', `A CSV input is at most ${maxBytes} bytes (CSV_INPUT_MAX_BYTES).`, { members: { limit: 'csv_input_max_bytes', allowed: maxBytes }, headers: { Connection: 'close' } });

/** Which cell of a row each task field is, once the header (if any) is known. */
function columnsOf(csv: CsvOptions, header: string[]): { url: number; externalId?: number } | { missing: string } {
  const column = (ref: string | number | undefined): number | undefined | { missing: string } => {
    if (ref === undefined || typeof ref === 'number') return ref;
    const index = header.indexOf(ref);
    return index < 0 ? { missing: ref } : index;
  };
  const url = column(csv.fields.url);
  const externalId = column(csv.fields.external_id);
  if (typeof url === 'object') return url;
  if (typeof externalId === 'object') return externalId;
  return { url: url as number, ...(externalId !== undefined ? { externalId } : {}) };
}

/**
 * Stores an upload read from `body` as it arrives: refused with 413 past `maxBytes`, with 429 past the
 * account's `stored_input_bytes`, with 400 naming the line for bytes that are not UTF-8, a quote
 * never closed, or a cell or row past its cap (csv-reader.ts, the cap named), and nothing of a refused
 * upload stays.
 */
export async function storeUpload(
  store: BatchStore,
  input: JobInputDoc,
  principal: Pick<Principal, 'plan'>,
  /** The account's inputs: the holders of its `stored_inputs` slots. */
  inputIds: string[],
  body: AsyncIterable<Buffer>,
  maxBytes: number,
  declaredBytes = 0,
): Promise<{ tasks: number; bytes: number }> {
  if (declaredBytes > maxBytes) {
    // Leaves the body unread (and the connection to end once answered).
    await body[Symbol.asyncIterator]().return?.();
    throw tooLarge(maxBytes);
  }
  const blobs = new Blobs(store.db);
  const allowance = principal.plan.limits.storedInputBytes - (await bytesHeld(store, inputIds, input._id));
  const reader = new CsvReader(input.csv.delimiter, input.csv.quote);
  let header: string[] | undefined = input.csv.header ? undefined : [];
  let columns: ReturnType<typeof columnsOf> | undefined = input.csv.header ? undefined : columnsOf(input.csv, []);
  let part: InputTask[] = [];
  let parts = 0;
  let tasks = 0;
  let bytes = 0;
  const flush = async (): Promise<void> => {
    if (part.length === 0) return;
    await blobs.put(inputOwner(input._id), partBlob(input._id, parts), Buffer.from(JSON.stringify(part)));
    parts++;
    part = [];
  };
  const take = (rows: Array<{ cells: string[]; line: number }>): void => {
    for (const row of rows) {
      if (!header) {
        header = row.cells;
        columns = columnsOf(input.csv, header);
        continue;
      }
      if (!columns || 'missing' in columns) continue;
      if (++tasks > MAX_ROWS) throw problem('invalid_argument', `Line ${row.line}: a job holds at most ${MAX_ROWS} tasks; split the input.`, { members: { parameter: 'file', line: row.line } });
      const externalId = columns.externalId === undefined ? undefined : row.cells[columns.externalId]?.trim();
      part.push({ url: (row.cells[columns.url] ?? '').trim(), ...(externalId ? { external_id: externalId } : {}) });
    }
  };
  try {
    for await (const chunk of body) {
      bytes += chunk.length;
      if (bytes > maxBytes) throw tooLarge(maxBytes);
      if (bytes > allowance) throw quotaExceeded('storedInputBytes', principal.plan.limits.storedInputBytes);
      take(reader.push(chunk));
      if (part.length >= PART_TASKS) await flush();
      // Chunks already received resolve the loop at once: let other requests' I/O in between them.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    take(reader.end());
    await flush();
  } catch (error) {
    await blobs.removeOwners([input._id]);
    if (error instanceof CsvError) {
      // Past a cap the rest of the body is not read: the connection ends with the answer.
      const cap = error.cap ? { members: { parameter: 'file', line: error.line, limit: error.cap.limit, allowed: error.cap.allowed }, headers: { Connection: 'close' } } : { members: { parameter: 'file', line: error.line } };
      throw problem('invalid_argument', `The CSV input cannot be read: ${error.message}`, cap);
    }
    throw error;
  }
  const refusal = columns && 'missing' in columns ? `The CSV has no column "${columns.missing}".` : undefined;
  await store.inputs.updateOne({ _id: input._id, uploaded: false }, { $set: { uploaded: true, parts, tasks, bytes, ...(refusal ? { refusal } : {}) } });
  return { tasks, bytes };
}
