/**
 * Batch cursors (core/jobs/cursor.ts), each bound to what it pages: the account's jobs (the last job
 * of the page), a job's runs (the last run's sequence), a run's results (the next slice). A cursor of
 * another listing, or one this service did not give, is 400 `invalid_argument`.
 */
import { problem } from '../../../base/errors';
import { cursorCodec, wholeNumber, type DecodedCursor } from '../../jobs/cursor';

const jobs = cursorCodec<string>('j1', { write: (jobId) => [jobId], read: (parts) => (parts.length === 1 && /^job_[0-9a-z]{26}$/.test(parts[0] ?? '') ? parts[0] : undefined) });
const runs = cursorCodec<number>('r1', { write: (sequence) => [String(sequence)], read: (parts) => (parts.length === 1 ? wholeNumber(parts[0]) : undefined) });
const results = cursorCodec<number>('s1', { write: (slice) => [String(slice)], read: (parts) => (parts.length === 1 ? wholeNumber(parts[0], 7) : undefined) });

function positionOf<P>(decoded: DecodedCursor<P>): P {
  if (decoded.ok) return decoded.position;
  throw problem('invalid_argument', decoded.reason === 'other_resource' ? 'The cursor belongs to another listing.' : 'The cursor is not one this endpoint gave.', { members: { parameter: 'cursor' } });
}

export const batchCursors = {
  jobs: {
    encode: (accountId: string, lastJobId: string): string => jobs.encode(accountId, lastJobId),
    decode: (accountId: string, cursor: string): string => positionOf(jobs.decode(accountId, cursor)),
  },
  runs: {
    encode: (jobId: string, lastSequence: number): string => runs.encode(jobId, lastSequence),
    decode: (jobId: string, cursor: string): number => positionOf(runs.decode(jobId, cursor)),
  },
  results: {
    encode: (runId: string, nextSlice: number): string => results.encode(runId, nextSlice),
    decode: (runId: string, cursor: string): number => positionOf(results.decode(runId, cursor)),
  },
};
