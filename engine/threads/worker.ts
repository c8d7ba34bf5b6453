/**
 * A pool thread (engine/threads/pool.ts): runs one task at a time, as the pool sends them, and answers
 * with its value or its error. Task modules are loaded the first time one of their tasks runs.
 */
import { parentPort } from 'node:worker_threads';
import { loadTasks, Transfer, type TaskTable, type Transferable } from './tasks';

export interface TaskMessage {
  id: number;
  file: string;
  name: string;
  input: unknown;
}

export type AnswerMessage = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: { name: string; message: string; stack?: string } };

const modules = new Map<string, TaskTable>();

async function run(message: TaskMessage): Promise<{ answer: AnswerMessage; transfer: Array<Transferable> }> {
  try {
    let table = modules.get(message.file);
    if (!table) {
      table = loadTasks(message.file);
      modules.set(message.file, table);
    }
    const task = table[message.name];
    if (typeof task !== 'function') throw new Error(`${message.file} has no task "${message.name}"`);
    const value = await task(message.input);
    if (value instanceof Transfer) return { answer: { id: message.id, ok: true, value: value.value }, transfer: [...value.list] };
    return { answer: { id: message.id, ok: true, value }, transfer: [] };
  } catch (caught) {
    const error = caught instanceof Error ? caught : new Error(String(caught));
    return { answer: { id: message.id, ok: false, error: { name: error.name, message: error.message, ...(error.stack ? { stack: error.stack } : {}) } }, transfer: [] };
  }
}

const port = parentPort;
if (port) {
  port.on('message', (message: TaskMessage) => {
    void run(message).then(({ answer, transfer }) => port.postMessage(answer, transfer));
  });
}
