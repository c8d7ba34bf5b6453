/**
 * Another worker process beside a stack's own, started from the same spec (command, environment, task
 * queue), for what needs more than one worker: tests of how work spreads, the scale-out benchmark.
 * Its output goes to `<logDir>/<name>.log`; `stop` ends it by its pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import path from 'node:path';
import type { Stack } from '../../scripts/stack/stack';

export interface ExtraWorker {
  identity: string;
  pid: number;
  logFile: string;
  stop(): Promise<void>;
}

export async function startExtraWorker(stack: Stack, name = 'worker-extra', readyTimeoutMs = 120_000): Promise<ExtraWorker> {
  const { spec } = stack.component('worker');
  const logFile = path.join(spec.logDir, `${name}.log`);
  const log = openSync(logFile, 'a');
  const child: ChildProcess = spawn(spec.command, spec.args, { cwd: spec.cwd, env: spec.env, stdio: ['ignore', log, log, 'ipc'] });
  closeSync(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
    process.kill(child.pid, 'SIGTERM');
    const timer = setTimeout(() => child.exitCode === null && child.signalCode === null && child.pid !== undefined && process.kill(child.pid, 'SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    const identity = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${name} was not ready within ${readyTimeoutMs} ms; see ${logFile}`)), readyTimeoutMs);
      child.on('message', (message: { type?: string; identity?: string }) => {
        if (message.type !== 'ready') return;
        clearTimeout(timer);
        resolve(message.identity ?? '');
      });
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`${name} exited before it was ready; see ${logFile}`));
      });
    });
    return { identity, pid: child.pid as number, logFile, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
