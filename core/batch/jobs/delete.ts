/** Deleting a job (its schedule first, then each run stopped as deleted) or one run (refused while a rerun reads its results). */
import type { Principal } from '../../accounts';
import { problem } from '../../../base/errors';
import type { CommandContext } from '../context';
import type { ControlCommands } from '../runs/controls';
import { isDeleted } from '../runs/view';

export function deleteCommands(c: CommandContext, controls: ControlCommands) {
  const { store } = c;
  return {
    async deleteJob(principal: Principal, jobId: string): Promise<void> {
      const job = await c.ownJob(principal, jobId);
      // No fire after the delete: the schedule goes first.
      if (job.type === 'scheduled') await c.schedules().remove(jobId);
      await store.jobs.updateOne({ _id: jobId }, { $set: { status: 'deleted', updated_at: new Date() } });
      if (job.type === 'scheduled') await c.deps.accounts.holdings.release(principal, 'scheduledJobs', jobId);
      for (const view of await c.runs.ofJob(jobId, Number.MAX_SAFE_INTEGER, 10_000)) await controls.stopRun(view.run, 'deleted');
    },

    async deleteRun(principal: Principal, jobId: string, runId: string): Promise<void> {
      await c.ownJob(principal, jobId);
      const view = await c.runs.one({ _id: runId, job_id: jobId });
      if (!view || isDeleted(view)) throw problem('not_found', `No run ${runId} in job ${jobId}.`);
      const children = [...(await c.runs.byIds((await store.runs.find({ rerun_of: runId }, { projection: { _id: 1 } }).toArray()).map((doc) => doc._id))).values()];
      const child = children.find((each) => !isDeleted(each));
      if (child) throw problem('run_has_descendants', `Run ${child.run._id} reruns this run and reads its results: delete it first.`, { members: { reason: 'run_has_descendants' } });
      await controls.stopRun(view.run, 'deleted');
    },
  };
}
