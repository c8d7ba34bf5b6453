/**
 * The entry of a document worker thread: converts one job at a time and answers with the result.
 * Loaded as worker.ts under tsx (sources, tests) or worker.js from the build (pool.ts picks).
 */
import { parentPort } from 'node:worker_threads';
import { convertInProcess } from './convert';
import type { WorkerJob, WorkerReply } from './pool';

const port = parentPort;
if (!port) throw new Error('engine/documents/worker runs only as a worker thread');

port.on('message', (job: WorkerJob) => {
  void convertInProcess(new Uint8Array(job.bytes), job.options, job.limits).then((result) => {
    const reply: WorkerReply = { id: job.id, result };
    port.postMessage(reply);
  });
});
