/**
 * The browsers' processes run in a CPU control group of their own, weighed below the service's
 * processes (engine/browser/cpu-group.ts): every process of a browser the pool started, the renderers
 * it forks for later pages included, is in `fetchplane-browsers` with the weight asked for; a pool
 * asked for none leaves its browser in this process's group.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { processConfig } from '../../base/config';
import { BrowserPool, findChromium, render } from '../../engine/browser';
import { CPU_GROUP_NAME, cpuGroupPlace } from '../../engine/browser/cpu-group';
import { kindOf, markedProcesses } from '../../engine/browser/processes';
import { FIXTURE_HOSTS, success, testGuard } from '../fixtures/browser/harness';
import { startFixtureServer, type FixtureServer } from '../helpers/fixtures';
import { FIXTURE_DOMAIN } from '../helpers/stack';

/** The CPU group of a process, as /proc/<pid>/cgroup names it (the cpu controller's line, else the unified one). */
function cpuGroupOf(pid: number | 'self'): string | undefined {
  try {
    const lines = readFileSync(`/proc/${pid}/cgroup`, 'utf8').trim().split('\n');
    const line = lines.find((entry) => (entry.split(':')[1] ?? '').split(',').includes('cpu')) ?? lines.find((entry) => entry.startsWith('0::'));
    return line?.slice(line.indexOf(':', line.indexOf(':') + 1) + 1);
  } catch {
    return undefined;
  }
}

describe('the browsers\' CPU group', function () {
  this.timeout(60_000);
  let site: FixtureServer;
  const guard = testGuard();
  const pools: BrowserPool[] = [];
  const poolWith = (cpuWeightPercent: number): BrowserPool => {
    const pool = new BrowserPool({ executablePath: findChromium(processConfig().chromiumPath), maxPages: 2, retireAfterPages: 100, hostOverrides: FIXTURE_HOSTS, cpuWeightPercent });
    pools.push(pool);
    return pool;
  };
  const processesOf = (pool: BrowserPool) => markedProcesses(new Set(pool.browserMarks()));

  before(async () => {
    site = await startFixtureServer((_req, res) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end('<!doctype html><html><body><h1>Ordinary</h1></body></html>');
    });
  });
  after(async () => {
    await Promise.all(pools.map((pool) => pool.close()));
    await site.close();
  });

  it('moves every process of a browser into the group with the weight asked for, the renderers of later pages too', async function () {
    const place = cpuGroupPlace();
    // The suite runs as root on a machine whose cgroup file system is writable; elsewhere there is nothing to check.
    if (typeof place === 'string' || process.getuid?.() !== 0) this.skip();
    const pool = poolWith(25);
    success(await render({ url: `${site.url}first`, reuseKey: 'a' }, { pool, guard }));
    // A page of another site and account: a renderer forked after the browser was moved.
    success(await render({ url: `http://www.other.${FIXTURE_DOMAIN}:${site.port}/second`, reuseKey: 'b' }, { pool, guard }));
    const processes = processesOf(pool);
    expect(processes.filter((process) => kindOf(process.pid) === 'renderer').length, 'renderers').to.be.at.least(2);
    const groups = new Set(processes.map((process) => cpuGroupOf(process.pid)).filter((group) => group !== undefined));
    expect([...groups].map((group) => path.posix.basename(group))).to.deep.equal([CPU_GROUP_NAME]);
    const { dir, weightFile } = place as Exclude<typeof place, string>;
    expect(Number(readFileSync(path.join(dir, weightFile), 'utf8'))).to.equal(weightFile === 'cpu.shares' ? 256 : 25);
    expect(cpuGroupOf('self'), 'this process stays where it was').to.not.match(new RegExp(`${CPU_GROUP_NAME}$`));
  });

  it('leaves the browser in this process\'s group when no weight is asked for', async () => {
    const pool = poolWith(0);
    success(await render({ url: `${site.url}plain`, reuseKey: 'a' }, { pool, guard }));
    const processes = processesOf(pool);
    expect(processes.length).to.be.greaterThan(0);
    for (const process of processes) expect(cpuGroupOf(process.pid)).to.equal(cpuGroupOf('self'));
  });
});
