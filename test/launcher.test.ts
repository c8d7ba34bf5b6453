/**
 * The launcher (`npm start`) as an operator runs it: each component killed from outside comes back;
 * SIGTERM to npm and SIGINT to its process group stop everything and leave no process and no
 * listening port behind; a component that keeps failing makes it stop everything and exit non-zero
 * with that component's last lines.
 */
import { expect } from 'chai';
import { alive, listeningPorts, portsListenedOn, processKind, processTree } from '../scripts/stack/proc';
import type { ComponentName } from '../scripts/stack/stack';
import { startFixtureServer } from './helpers/fixtures';
import { startLauncher, type Launcher } from './helpers/launcher';
import { eventually } from './helpers/stack';

const ready = async (launcher: Launcher): Promise<boolean> => (await fetch(`${launcher.api}/readyz`, { signal: AbortSignal.timeout(2_000) })).status === 200;

/** Kills a component as a crash would and waits until the launcher has it back and serving. */
async function killAndAwaitReturn(launcher: Launcher, name: ComponentName): Promise<void> {
  const pid = launcher.pidOf(name);
  expect(pid, `${name} runs`).to.be.a('number');
  process.kill(pid as number, 'SIGKILL');
  await eventually(async () => {
    const now = launcher.pidOf(name);
    return now !== undefined && now !== pid && new RegExp(`\\] ${name} back at .* \\(pid ${now}\\)`).test(launcher.output());
  }, 600, 100);
  expect(launcher.output()).to.match(new RegExp(`\\] ${name} exited unexpectedly \\(signal SIGKILL\\)`));
  await eventually(() => ready(launcher), 300, 200);
}

/** Everything the launcher started, and the ports they listen on, before it is asked to stop. */
function snapshot(launcher: Launcher): { pids: number[]; ports: number[] } {
  const pids = processTree(launcher.child.pid as number);
  return { pids, ports: listeningPorts(pids) };
}

async function expectAllGone(launcher: Launcher, before: { pids: number[]; ports: number[] }): Promise<void> {
  await eventually(async () => before.pids.every((pid) => !alive(pid)), 600, 100).catch(() => undefined);
  expect(before.pids.filter(alive), 'processes left behind').to.deep.equal([]);
  expect(portsListenedOn(before.ports), 'ports still listened on').to.deep.equal([]);
}

describe('the launcher (npm start)', function () {
  this.timeout(300_000);
  let launcher: Launcher | undefined;

  afterEach(async () => {
    await launcher?.close();
    launcher = undefined;
  });

  it('restarts each component killed from outside, then stops everything on SIGTERM to npm', async () => {
    launcher = await startLauncher({ TARGET_ALLOWLIST: '127.0.0.1' });
    expect(await ready(launcher)).to.equal(true);
    for (const name of ['worker', 'api', 'ferretdb', 'temporal'] as const) await killAndAwaitReturn(launcher, name);

    // A rendered page, so that the API runs Chromium too when the stop comes.
    const site = await startFixtureServer((_req, res) => {
      res.setHeader('Content-Type', 'text/html');
      res.end('<html><body><p id="out"></p><script>document.getElementById("out").textContent = "rendered " + (6 * 7)</script></body></html>');
    });
    try {
      const key = await launcher.createKey();
      const page = await fetch(`${launcher.api}/v1/?apikey=${key}&js_render=true&url=${encodeURIComponent(site.url)}`);
      expect(page.status).to.equal(200);
      expect(await page.text()).to.include('rendered 42');
    } finally {
      await site.close();
    }

    const before = snapshot(launcher);
    // npm, the shell, bootstrap, the launcher, FerretDB, Temporal, worker, API and Chromium at least.
    expect(before.pids.length).to.be.greaterThanOrEqual(9);
    expect(before.pids.some((pid) => processKind(pid)?.chromium), 'Chromium among them').to.equal(true);
    const api = Number(new URL(launcher.api).port);
    expect(before.ports).to.include(api);
    process.kill(launcher.child.pid as number, 'SIGTERM');
    await launcher.exited;
    await expectAllGone(launcher, before);
    expect(launcher.output()).to.match(/\[fetchplane\] stopped/);
  });

  it('stops everything on SIGINT to its process group (Ctrl-C)', async () => {
    launcher = await startLauncher();
    const before = snapshot(launcher);
    expect(before.ports.length).to.be.greaterThanOrEqual(4);
    process.kill(-(launcher.child.pid as number), 'SIGINT');
    await launcher.exited;
    await expectAllGone(launcher, before);
    expect(launcher.groupAlive(), 'processes left in its group').to.equal(false);
  });

  it('stops what it started so far on SIGTERM during the start', async () => {
    launcher = await startLauncher({}, /\] ferretdb ready in/);
    process.kill(launcher.child.pid as number, 'SIGTERM');
    await launcher.exited;
    await eventually(async () => !launcher!.groupAlive(), 600, 100).catch(() => undefined);
    expect(launcher.groupAlive(), 'processes left in its group').to.equal(false);
    expect(launcher.output()).to.not.match(/Press Ctrl-C to stop/);
  });

  it('gives up on a component that keeps failing: stops everything, exits 1 and prints its last lines', async () => {
    // One restart allowed: the second crash within the window is one too many.
    launcher = await startLauncher({ RESTART_LIMIT: '1', RESTART_WINDOW_SECONDS: '3600' });
    await killAndAwaitReturn(launcher, 'worker');
    const before = snapshot(launcher);
    process.kill(launcher.pidOf('worker') as number, 'SIGKILL');
    const { code } = await launcher.exited;
    expect(code).to.equal(1);
    const output = launcher.output();
    expect(output).to.match(/\] worker exited unexpectedly \(signal SIGKILL\) .*: 2 failures within 3600\.0 s, giving up/);
    const lastLines = output.slice(output.indexOf('worker keeps failing; its last lines'));
    expect(lastLines, 'the worker\'s own log lines').to.match(/"msg":"worker running"/);
    await expectAllGone(launcher, before);
  });
});
