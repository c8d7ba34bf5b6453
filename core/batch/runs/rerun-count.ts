/** How many tasks a rerun fetches again and how many it keeps from the run it reruns, read from that run's results. */
import type { TaskStatus } from '../run-types';
import { ids, type BatchStore, type JobDoc } from '../store';

export async function countRerun(store: BatchStore, job: JobDoc, of: string | null, statuses: TaskStatus[] | undefined): Promise<{ retried: number; inherited: number }> {
  if (!of || !statuses) return { retried: job.task_count, inherited: 0 };
  let retried = 0;
  let covered = 0;
  for (let n = 0; n < job.slice_count; n += 200) {
    const wanted = Array.from({ length: Math.min(200, job.slice_count - n) }, (_, index) => ids.result(of, n + index));
    for (const doc of await store.readResultDocs(wanted)) {
      for (const item of doc.items) {
        covered++;
        if ((statuses as string[]).includes(item.status) || item.status === 'pending') retried++;
      }
    }
  }
  // Tasks the run never reached (no result document) are fetched again too.
  retried += job.task_count - covered;
  return { retried, inherited: job.task_count - retried };
}
