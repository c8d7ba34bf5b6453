/**
 * The current run's controls: pause, resume, stop; and the stop (or delete) of any run. Each is
 * recorded in the run's control document first (the run's tasks read it before each start), then
 * signalled to the run's workflow. A stop answers the run as `stopped` at once: no task starts after
 * it, tasks in flight may finish (billed only if they succeed).
 */
import type { Principal } from '../../accounts';
import { problem } from '../../../base/errors';
import { PAUSE_SIGNAL, RESUME_SIGNAL, STOP_SIGNAL, type StopKind } from '../../jobs/workflow-names';
import type { CommandContext } from '../context';
import type { RunControlDoc, RunDoc } from '../store';
import { isTerminal } from './records';
import type { RunView } from './view';

export function controlCommands(c: CommandContext) {
  const currentRun = async (principal: Principal, jobId: string): Promise<RunView> => {
    const job = await c.ownJob(principal, jobId);
    const run = await c.latestRun(job);
    if (!run) throw problem('no_prior_run', 'The job has no run yet.', { members: { reason: 'no_prior_run' } });
    return run;
  };

  /** Records a stop or a delete of a run and tells its workflow; a run that has ended only records it. */
  const stopRun = async (run: RunDoc, kind: StopKind): Promise<RunControlDoc> => {
    const control = await c.runs.control(run, { stop: kind });
    if (!isTerminal(run.status)) await c.signal(run._id, STOP_SIGNAL, kind);
    return control;
  };

  const notStoppable = (run: RunDoc, action: string) =>
    problem('run_not_stoppable', `The run has ended or is stopping (${run.status}): there is nothing to ${action}.`, { members: { reason: 'run_not_stoppable' } });

  return {
    currentRun,
    stopRun,

    async pause(principal: Principal, jobId: string): Promise<RunView> {
      const { run, control } = await currentRun(principal, jobId);
      if (isTerminal(run.status) || control?.stop) throw notStoppable(run, 'pause');
      const next = await c.runs.control(run, { pause_state: 'paused' });
      await c.signal(run._id, PAUSE_SIGNAL);
      return { run, control: next };
    },

    async resume(principal: Principal, jobId: string): Promise<RunView> {
      const { run, control } = await currentRun(principal, jobId);
      if (isTerminal(run.status) || control?.stop) throw notStoppable(run, 'resume');
      const next = await c.runs.control(run, { pause_state: 'active' });
      await c.signal(run._id, RESUME_SIGNAL);
      return { run, control: next };
    },

    async stop(principal: Principal, jobId: string): Promise<RunView> {
      const { run, control } = await currentRun(principal, jobId);
      if (isTerminal(run.status) || control?.stop) throw notStoppable(run, 'stop');
      return { run, control: await stopRun(run, 'stopped') };
    },
  };
}

export type ControlCommands = ReturnType<typeof controlCommands>;
