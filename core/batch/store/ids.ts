/**
 * The ids of Batch's documents and blobs: each names what it belongs to, so a document is found (and
 * a retried write lands on the same one) with a single `_id` look-up.
 */
import type { FetchedBy } from './records';

export const ids = {
  slice: (jobId: string, n: number): string => `${jobId}:${n}`,
  result: (runId: string, n: number): string => `${runId}:${n}`,
  /** The results a paused slice stored at the end of part `part` (the part after it starts from them). */
  part: (runId: string, n: number, part: number): string => `${runId}:${n}:part${part}`,
  /** A large body's blob, written by one part and attempt of its slice's activity. */
  body: (runId: string, seq: number, by: FetchedBy): string => `${runId}:${seq}:${writerOf(by)}`,
  /** A pack of small bodies of one slice, written by one part and attempt of its activity. */
  pack: (runId: string, n: number, by: FetchedBy, pack: number): string => `${runId}:s${n}:${writerOf(by)}:p${pack}`,
  /** A task id names its slice and its place there, so a task is found with one look-up. */
  task: (n: number, index: number): string => `t${n}_${index}`,
};

/** The writer's token in a body's id: the attempt alone for part 0, else part and attempt. */
const writerOf = (by: FetchedBy): string => (by.part === 0 ? `${by.attempt}` : `${by.part}.${by.attempt}`);

export function taskPlace(taskId: string): { n: number; index: number } | undefined {
  const match = /^t(0|[1-9]\d{0,5})_(0|[1-9]\d{0,3})$/.exec(taskId);
  return match ? { n: Number(match[1]), index: Number(match[2]) } : undefined;
}
