/**
 * A closed job run again: every task, or (`status`) only those whose last status is in the filter, the
 * others inherited from the previous run. Under the Idempotency-Key (the claim reserves the run id):
 *
 *   claim ─> checks (closed job, previous run ended, a task matches) ─> credits probe ─> startRun
 *
 * A retry that took over a dead rerun whose run was written finishes that run's start.
 */
import type { Principal } from '../../accounts';
import { problem } from '../../../base/errors';
import { newId } from '../../../base/ids';
import { idempotent } from '../../jobs/idempotent';
import { batchIdempotencyWords, type CommandContext } from '../context';
import type { TaskStatus } from '../run-types';
import type { JobDoc } from '../store';
import { isTerminal } from './records';
import { countRerun } from './rerun-count';
import { isDeleted, runStatusOf, type RunView } from './view';

/** A partial rerun reads the results of the run it retries: only within this time of that run's start. */
export const PARTIAL_RERUN_WINDOW_MS = 10 * 24 * 3_600_000;

export interface Rerun {
  job: JobDoc;
  run: RunView;
  retried: number;
  inherited: number;
}

export function rerunCommand(c: CommandContext) {
  const { store } = c;
  const counted = async (job: JobDoc, view: RunView) => ({ job, run: view, ...(await countRerun(store, job, view.run.rerun_of, view.run.rerun_statuses ?? undefined)) });

  return async function rerun(principal: Principal, jobId: string, statuses: TaskStatus[] | undefined, idempotencyKey?: string, ready?: () => Promise<void>): Promise<Rerun> {
    await ready?.();
    const done = await idempotent(
      c.idempotencyKeys,
      batchIdempotencyWords,
      { accountId: principal.accountId, key: idempotencyKey, scope: `rerun:${jobId}`, body: { statuses: statuses ?? null }, reserve: () => newId('run') },
      {
        replay: async (runId) => {
          const job = await c.ownJob(principal, jobId);
          const view = await c.runs.one({ _id: runId });
          return view ? counted(job, view) : undefined;
        },
        run: async (claim) => {
          const job = await c.ownJob(principal, jobId);
          const earlier = claim?.takenOver ? await c.runs.one({ _id: claim.recordId, job_id: jobId }) : null;
          if (earlier && claim) {
            // A rerun whose request died after writing its run: its start is finished, its checks were made.
            const run = await c.startRun(principal, job, earlier.run._id, undefined, claim);
            return { value: await counted(await c.ownJob(principal, jobId), { run, control: earlier.control }), resultId: run._id };
          }
          if (job.status !== 'closed') throw problem('job_not_open', 'An open job cannot be rerun: close it first.', { members: { reason: 'job_not_open' } });
          const latest = await c.latestRun(job);
          // A scheduled job that has not fired yet is fired by hand: a full run.
          if (!latest && (job.type !== 'scheduled' || statuses)) throw problem('no_prior_run', 'The job has no run to rerun.', { members: { reason: 'no_prior_run' } });
          const previous = latest?.run;
          if (latest && previous && (!isTerminal(previous.status) || isDeleted(latest))) {
            const shown = runStatusOf(latest);
            const why = shown === 'stopped' ? 'stopped, its tasks in flight still finishing' : shown;
            throw problem('run_not_terminal', `The latest run is ${why}: a rerun starts after it ends.`, { members: { reason: 'run_not_terminal' } });
          }
          if (statuses && previous && Date.now() - previous.created_at.getTime() > PARTIAL_RERUN_WINDOW_MS) {
            throw problem('partial_rerun_window_expired', `Run ${previous._id} started more than 10 days ago: only a full rerun can follow it.`, { members: { reason: 'partial_rerun_window_expired' } });
          }
          const counts = await countRerun(store, job, statuses && previous ? previous._id : null, statuses);
          if (statuses && counts.retried === 0) throw problem('no_matching_tasks', `No task of run ${previous?._id ?? ''} has status ${statuses.join(' or ')}.`, { members: { reason: 'no_matching_tasks' } });
          await c.probeCredits(principal);
          const runId = claim?.recordId || newId('run');
          const run = await c.startRun(principal, job, runId, statuses && previous ? { of: previous._id, statuses } : undefined, claim);
          return { value: { job: await c.ownJob(principal, jobId), run: { run, control: null }, ...counts }, resultId: runId };
        },
      },
    );
    return done.value;
  };
}
