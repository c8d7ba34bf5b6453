import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Agent, request } from 'undici';
import { ManagedProcess } from '../../scripts/stack/process';
import { childPids as childrenOf } from '../../scripts/stack/proc';
import { freePort } from '../helpers/ports';
import { eventually, testStack } from '../helpers/stack';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('API_PROCESSES: several API processes on one port', function () {
  this.timeout(120_000);
  let folder: string;
  let api: ManagedProcess;
  let url: string;

  before(async () => {
    folder = mkdtempSync(path.join(os.tmpdir(), 'fetchplane-cluster-'));
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    const stackApi = testStack().component('api').spec;
    api = new ManagedProcess({
      ...stackApi,
      name: 'api-cluster',
      env: { ...stackApi.env, PORT: String(port), API_PROCESSES: '2' },
      logDir: folder,
      runDir: folder,
    });
    await api.start();
  });

  after(async () => {
    await api.stop();
    rmSync(folder, { recursive: true, force: true });
  });

  it('runs two processes behind one port, replaces one that dies, and stops them all', async () => {
    const supervisor = api.pid as number;
    const first = childrenOf(supervisor);
    expect(first).to.have.length(2);

    // Each new connection goes to one of the processes; all of them answer.
    const answers = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const dispatcher = new Agent({ pipelining: 0 });
        try {
          const response = await request(`${url}/healthz`, { dispatcher });
          await response.body.dump();
          return response.statusCode;
        } finally {
          await dispatcher.close();
        }
      }),
    );
    expect(answers).to.deep.equal(Array.from({ length: 8 }, () => 200));

    const victim = first[0] as number;
    process.kill(victim, 'SIGKILL');
    await eventually(async () => {
      const now = childrenOf(supervisor);
      return now.length === 2 && !now.includes(victim);
    });
    await eventually(async () => {
      const response = await request(`${url}/readyz`);
      await response.body.dump();
      return response.statusCode === 200;
    });

    const last = childrenOf(supervisor);
    await api.stop();
    expect(alive(supervisor)).to.equal(false);
    await eventually(async () => last.every((pid) => !alive(pid)));
  });
});
