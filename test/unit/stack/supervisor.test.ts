/**
 * Supervision with real child processes (a few lines of Node that announce readiness over IPC and
 * then wait): a crash is healed, a deliberate stop or kill is left alone, a start by someone else is
 * not doubled, and a component that keeps failing makes the supervisor give up.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ManagedProcess } from '../../../scripts/stack/process';
import { Supervisor } from '../../../scripts/stack/supervisor';

const CHILD = "process.send({ type: 'ready', port: 1234 }); console.log('child ' + process.pid + ' up'); setInterval(() => undefined, 1000); process.on('disconnect', () => process.exit(0));";

const waitFor = async (check: () => boolean, what: string): Promise<void> => {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what} did not happen`);
};

describe('supervision of the local stack', () => {
  let folder: string;
  let child: ManagedProcess;
  let lines: string[];
  let gaveUp: string[];
  let supervisor: Supervisor<'child'>;

  beforeEach(async () => {
    folder = mkdtempSync(path.join(os.tmpdir(), 'fetchplane-supervisor-'));
    child = new ManagedProcess({ name: 'child', command: process.execPath, args: ['-e', CHILD], env: {}, cwd: folder, logDir: folder, runDir: folder, ipc: true });
    lines = [];
    gaveUp = [];
    supervisor = new Supervisor({
      policy: { restartLimit: 2, windowMs: 60_000, firstDelayMs: 50, maxDelayMs: 200 },
      restart: () => child.start(),
      report: (line) => lines.push(line),
      giveUp: (name, reason) => gaveUp.push(`${name}: ${reason}`),
    });
    supervisor.watch('child', child);
    supervisor.resume();
    await child.start();
  });

  afterEach(async () => {
    supervisor.halt();
    await child.stop();
    rmSync(folder, { recursive: true, force: true });
  });

  it('restarts a process killed from outside and says what died and when it came back', async () => {
    const first = child.pid as number;
    expect(child.readyMessage?.port).to.equal(1234);
    process.kill(first, 'SIGKILL');
    await waitFor(() => lines.some((line) => line.startsWith('child back at')), 'the restart');
    expect(child.pid).to.not.equal(first);
    expect(child.running).to.equal(true);
    expect(lines[0]).to.match(/^child exited unexpectedly \(signal SIGKILL\) at \d\d:\d\d:\d\d\.\d{3}; restarting it in 0\.1 s$/);
    expect(lines[1]).to.match(new RegExp(`^child back at \\d\\d:\\d\\d:\\d\\d\\.\\d{3} \\(pid ${child.pid}\\), \\d+\\.\\d s after it went down$`));
    await waitFor(() => child.recentOutput().length > 0, 'the output of the new process');
    expect(child.recentOutput()).to.deep.equal([`child ${child.pid} up`]);
  });

  it('leaves a deliberate stop or kill alone, and lets the caller restart it', async () => {
    await child.stop();
    await child.kill();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(child.running).to.equal(false);
    await child.start();
    const mine = child.pid;
    await child.kill();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(child.running).to.equal(false);
    expect(lines).to.deep.equal([]);
    await child.start();
    expect(child.pid).to.not.equal(mine);
  });

  it('does not start a second copy when someone else restarts a crashed process first', async () => {
    process.kill(child.pid as number, 'SIGKILL');
    await waitFor(() => lines.length === 1, 'the crash report');
    await child.start();
    const restarted = child.pid;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(child.pid).to.equal(restarted);
    expect(child.running).to.equal(true);
    expect(lines.filter((line) => line.includes('back at'))).to.deep.equal([]);
  });

  it('gives up after more failures within the window than the limit allows', async () => {
    for (let crash = 1; crash <= 3; crash++) {
      const pid = child.pid as number;
      process.kill(pid, 'SIGKILL');
      if (crash < 3) await waitFor(() => lines.filter((line) => line.startsWith('child back at')).length === crash, `restart ${crash}`);
    }
    await waitFor(() => gaveUp.length === 1, 'giving up');
    expect(gaveUp).to.deep.equal(['child: child failed 3 times within 60.0 s']);
    expect(lines.at(-1)).to.match(/^child exited unexpectedly \(signal SIGKILL\) at .*: 3 failures within 60\.0 s, giving up$/);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(child.running).to.equal(false);
  });
});
