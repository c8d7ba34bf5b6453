/**
 * The worker pool (engine/threads): tasks of a module run on threads with their answers or failures,
 * a task past its time or memory budget ends its thread and the pool goes on serving, the queue is
 * bounded, buffers move, and closing ends everything.
 */
import { expect } from 'chai';
import path from 'node:path';
import { isTaskFailure, taskModule, WorkerPool, type TaskFailureReason } from '../../../engine/threads';
import type { tasks } from '../../fixtures/thread-tasks';

const TASKS = taskModule<typeof tasks>(path.join(__dirname, '../../fixtures'), 'thread-tasks');

async function failureOf(work: Promise<unknown>): Promise<{ reason: TaskFailureReason; message: string }> {
  try {
    await work;
  } catch (error) {
    if (isTaskFailure(error)) return { reason: error.reason, message: error.message };
    throw error;
  }
  throw new Error('the task answered');
}

describe('the worker pool', () => {
  let pool: WorkerPool;
  afterEach(() => pool.close());

  it('runs a task of a module on a thread and answers its value', async () => {
    pool = new WorkerPool({ size: 1, queueLimit: 4, timeoutMs: 10_000, memoryMb: 64 });
    expect(await pool.run(TASKS, 'echo', { text: 'hello' })).to.deep.equal({ text: 'hello', thread: true });
    expect(pool.stats()).to.deep.equal({ threads: 1, busy: 0, queued: 0 });
  });

  it('stops a task past its time budget, and the pool still serves the next task', async () => {
    pool = new WorkerPool({ size: 1, queueLimit: 4, timeoutMs: 10_000, memoryMb: 64 });
    const spinning = pool.run(TASKS, 'spin', {}, { timeoutMs: 300 });
    const next = pool.run(TASKS, 'echo', { text: 'next' }); // waits behind the spinning task
    expect(await failureOf(spinning)).to.deep.equal({ reason: 'timeout', message: 'The task ran past its time budget of 300 ms and was stopped.' });
    expect(await next).to.deep.equal({ text: 'next', thread: true });
  });

  it('ends a thread whose task goes past its memory budget, and the pool still serves the next task', async () => {
    pool = new WorkerPool({ size: 1, queueLimit: 4, timeoutMs: 60_000, memoryMb: 48 });
    expect(await failureOf(pool.run(TASKS, 'hoard', {}))).to.deep.equal({ reason: 'memory', message: 'The task needed more than the 48 MB a thread may use.' });
    expect(await pool.run(TASKS, 'echo', { text: 'after' })).to.deep.equal({ text: 'after', thread: true });
  });

  it('answers an error the task throws as its failure, keeping the thread', async () => {
    pool = new WorkerPool({ size: 1, queueLimit: 4, timeoutMs: 10_000, memoryMb: 64 });
    expect(await failureOf(pool.run(TASKS, 'fail', { message: 'bad input' }))).to.deep.equal({ reason: 'error', message: 'bad input' });
    expect(await pool.run(TASKS, 'echo', { text: 'still' })).to.deep.equal({ text: 'still', thread: true });
    expect(pool.stats().threads).to.equal(1);
  });

  it('refuses a task when every thread is busy and the queue is full, and drops a waiting task its caller aborts', async () => {
    pool = new WorkerPool({ size: 1, queueLimit: 1, timeoutMs: 10_000, memoryMb: 64 });
    const running = pool.run(TASKS, 'sleep', { ms: 300 });
    const aborting = new AbortController();
    const waiting = pool.run(TASKS, 'sleep', { ms: 1 }, { signal: aborting.signal });
    expect(await failureOf(pool.run(TASKS, 'echo', { text: 'one too many' }))).to.deep.include({ reason: 'queue_full' });
    aborting.abort();
    expect(await failureOf(waiting)).to.deep.include({ reason: 'aborted' });
    expect(pool.stats().queued).to.equal(0);
    expect(await running).to.equal(300);
  });

  it('moves buffers to the thread and back instead of copying them', async () => {
    pool = new WorkerPool({ size: 1, queueLimit: 4, timeoutMs: 10_000, memoryMb: 64 });
    const bytes = new Uint8Array([1, 2, 3, 250]);
    const sum = await pool.run(TASKS, 'sum', { bytes }, { transfer: [bytes.buffer] });
    expect(bytes.byteLength).to.equal(0); // moved: the caller's view is detached
    expect(new DataView(sum.buffer).getUint32(0)).to.equal(256);
  });

  it('closes: waiting and running tasks fail as closed, the threads end, and no task is taken afterwards', async () => {
    pool = new WorkerPool({ size: 1, queueLimit: 4, timeoutMs: 10_000, memoryMb: 64 });
    const running = failureOf(pool.run(TASKS, 'sleep', { ms: 5_000 }));
    const waiting = failureOf(pool.run(TASKS, 'echo', { text: 'queued' }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await pool.close();
    expect((await running).reason).to.equal('closed');
    expect((await waiting).reason).to.equal('closed');
    expect(pool.stats()).to.deep.equal({ threads: 0, busy: 0, queued: 0 });
    expect((await failureOf(pool.run(TASKS, 'echo', { text: 'late' }))).reason).to.equal('closed');
  });
});
