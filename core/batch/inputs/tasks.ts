/** The tasks of a `file_input_id`, read back from the parsed parts its upload was kept in (uploads.ts), a part at a time. */
import { problem } from '../../../base/errors';
import { Blobs } from '../../jobs/blobs';
import type { BatchStore } from '../store';
import { partBlob, type InputTask } from './uploads';

export async function inputTasks(store: BatchStore, accountId: string, inputId: string): Promise<InputTask[]> {
  const blobs = new Blobs(store.db);
  const input = await store.inputs.findOne({ _id: inputId });
  if (!input || input.account_id !== accountId || input.expires_at.getTime() < Date.now()) {
    throw problem('file_input_not_found', `No file input ${inputId}, or its 24-hour slot expired.`, { members: { reason: 'file_input_not_found' } });
  }
  if (!input.uploaded) throw problem('file_input_not_uploaded', `File input ${inputId} was never uploaded: PUT the CSV to its upload URL first.`, { members: { reason: 'file_input_not_uploaded' } });
  if (input.refusal) throw problem('invalid_argument', input.refusal, { members: { parameter: 'csv.fields' } });
  const tasks: InputTask[] = [];
  for (let n = 0; n < (input.parts ?? 0); n++) {
    const stored = await blobs.read(partBlob(inputId, n));
    tasks.push(...(JSON.parse((stored ?? Buffer.from('[]')).toString('utf8')) as InputTask[]));
  }
  return tasks;
}
