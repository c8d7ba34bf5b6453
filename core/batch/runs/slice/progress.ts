/**
 * A slice part's progress and bill: what its heartbeats carry (the tasks it has finished, their bodies
 * stored), and the key and credits of the bill each part settles (core/jobs/charges.ts).
 */
import type { TaskResult } from '../../store';

/** What a slice's heartbeats carry: the tasks this part has finished, their bodies stored. */
export interface SliceProgress {
  part: number;
  done: Array<[number, TaskResult]>;
}

/** The progress a retried attempt of part `part` starts from: its last heartbeat's, when it was this part's. */
export const progressOf = (details: unknown, part: number): Array<[number, TaskResult]> => {
  const progress = details as Partial<SliceProgress> | undefined;
  return progress && progress.part === part && Array.isArray(progress.done) ? progress.done : [];
};

/** The bill of part `part` of slice `n`: part 0 under the slice's own key, later parts under `<n>.<part>`. */
export const billKey = (n: number, part: number): number | string => (part === 0 ? n : `${n}.${part}`);

/** Credits of the tasks part `part` fetched (inherited results cost nothing): what that part's bill settles. */
export const creditsOfPart = (items: TaskResult[], part: number): number =>
  items.reduce((sum, item) => sum + (item.sourceRunId === undefined && item.fetchedBy?.part === part ? item.credits : 0), 0);
