import { expect } from 'chai';
import { batchCursors } from '../../../core/batch/results/cursors';
import { isApiError } from '../../../base/errors';
import { cursorCodec, wholeNumber } from '../../../core/jobs/cursor';

const refusal = (read: () => unknown): string => {
  try {
    read();
    return 'read';
  } catch (error) {
    return isApiError(error) ? `${error.code}: ${error.detail}` : String(error);
  }
};

describe('one cursor codec, bound to what it pages', () => {
  const codec = cursorCodec<number>('x1', { write: (n) => [String(n)], read: (parts) => (parts.length === 1 ? wholeNumber(parts[0]) : undefined) });

  it('reads back its own position for the same resource only', () => {
    const cursor = codec.encode('run_a', 42);
    expect(codec.decode('run_a', cursor)).to.deep.equal({ ok: true, position: 42 });
    expect(codec.decode('run_b', cursor)).to.deep.equal({ ok: false, reason: 'other_resource' });
    expect(codec.decode('run_a', 'not a cursor!')).to.deep.equal({ ok: false, reason: 'malformed' });
    expect(codec.decode('run_a', Buffer.from('x2.run_a.42').toString('base64url'))).to.deep.equal({ ok: false, reason: 'malformed' });
    expect(codec.decode('run_a', Buffer.from('x1.run_a.042').toString('base64url'))).to.deep.equal({ ok: false, reason: 'malformed' });
  });

  it('binds a Batch results cursor to its run', () => {
    const cursor = batchCursors.results.encode('run_1', 7);
    expect(batchCursors.results.decode('run_1', cursor)).to.equal(7);
    expect(refusal(() => batchCursors.results.decode('run_2', cursor))).to.match(/^invalid_argument: The cursor belongs to another listing/);
    expect(refusal(() => batchCursors.results.decode('run_1', 'nonsense'))).to.match(/^invalid_argument/);
  });

  it('binds the job list to its account and a job’s runs to the job', () => {
    const jobId = `job_${'a'.repeat(26)}`;
    expect(batchCursors.jobs.decode('acct_1', batchCursors.jobs.encode('acct_1', jobId))).to.equal(jobId);
    expect(refusal(() => batchCursors.jobs.decode('acct_2', batchCursors.jobs.encode('acct_1', jobId)))).to.match(/another listing/);
    expect(batchCursors.runs.decode(jobId, batchCursors.runs.encode(jobId, 3))).to.equal(3);
  });
});
