/**
 * Batch cursors (core/jobs/cursor.ts), each bound to what it pages: the account's jobs (the last job
 * of the page), a job's runs (the last run's sequence), a run's results (the next slice). Cursors
 * of the earlier unbound forms (`job_…`, `r<n>`, `s<n>`, base64url) are still read.
 */
import { problem } from '../../base/errors';
import { cursorCodec, wholeNumber, type DecodedCursor } from '../jobs/cursor';

const jobs = cursorCodec<string>('j1', { write: (jobId) => [jobId], read: (parts) => (parts.length === 1 && /^job_[0-9a-z]{26}$/.test(parts[0] ?? '') ? parts[0] : undefined) });
const runs = cursorCodec<number>('r1', { write: (sequence) => [String(sequence)], read: (parts) => (parts.length === 1 ? wholeNumber(parts[0]) : undefined) });
const results = cursorCodec<number>('s1', { write: (slice) => [String(slice)], read: (parts) => (parts.length === 1 ? wholeNumber(parts[0], 7) : undefined) });

const legacy = (cursor: string, pattern: RegExp): string | undefined => {
  const text = Buffer.from(cursor, 'base64url').toString();
  return pattern.test(text) ? text : undefined;
};

function positionOf<P>(decoded: DecodedCursor<P>, old: P | undefined): P {
  if (decoded.ok) return decoded.position;
  if (old !== undefined) return old;
  throw problem('invalid_argument', decoded.reason === 'other_resource' ? 'The cursor belongs to another listing.' : 'The cursor is not one this endpoint gave.', { members: { parameter: 'cursor' } });
}

export const batchCursors = {
  jobs: {
    encode: (accountId: string, lastJobId: string): string => jobs.encode(accountId, lastJobId),
    decode: (accountId: string, cursor: string): string => positionOf(jobs.decode(accountId, cursor), legacy(cursor, /^job_[0-9a-z]{26}$/)),
  },
  runs: {
    encode: (jobId: string, lastSequence: number): string => runs.encode(jobId, lastSequence),
    decode: (jobId: string, cursor: string): number => positionOf(runs.decode(jobId, cursor), ((old) => (old ? Number(old.slice(1)) : undefined))(legacy(cursor, /^r[1-9]\d{0,8}$/))),
  },
  results: {
    encode: (runId: string, nextSlice: number): string => results.encode(runId, nextSlice),
    decode: (runId: string, cursor: string): number => positionOf(results.decode(runId, cursor), ((old) => (old ? Number(old.slice(1)) : undefined))(legacy(cursor, /^s(0|[1-9]\d{0,6})$/))),
  },
};
