import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { openAccounts, type AccountsHandle } from '../helpers/app';
import { testStack } from '../helpers/stack';
import { runChaos } from './drive';

/**
 * Mixed traffic (Fetch, Batch, crawls and a monitor checked every 2 s) while each of worker, API, FerretDB and Temporal is SIGKILLed once from outside, the
 * launcher alone bringing each back. The seed of the kill moments is printed with the figures.
 */
describe('Chaos: every component killed once under mixed traffic', function () {
  this.timeout(900_000);
  let handle: AccountsHandle;
  before(async () => {
    handle = await openAccounts();
  });
  after(() => handle.close());

  it('loses nothing accepted, charges each success once, and comes back by itself', async () => {
    const seed = Math.floor(Math.random() * 1_000_000);
    process.stdout.write(`      chaos seed ${seed}\n`);
    const stack = testStack();
    const report = await runChaos(
      { api: () => stack.urls.api, pid: (name) => stack.component(name).pid, accounts: handle.accounts, db: handle.db.db, apiLog: () => readFileSync(stack.component('api').logFile, 'utf8') },
      { seed, durationMs: 100_000, fetchLanes: 2, jobTasks: 40, jobEveryMs: 8_000, crawlPages: 12, crawlEveryMs: 15_000, log: (line) => process.stdout.write(`      ${line}\n`) },
    );
    process.stdout.write(`      ${JSON.stringify({ ...report, problems: undefined })}\n`);
    expect(report.kills.map((kill) => kill.component).sort()).to.deep.equal(['api', 'ferretdb', 'temporal', 'worker']);
    expect(report.jobs.accepted, 'Batch jobs accepted').to.be.greaterThan(0);
    expect(report.crawls.accepted, 'crawls accepted').to.be.greaterThan(0);
    expect(report.fetch.ok, 'Fetch answers 200').to.be.greaterThan(0);
    expect(report.monitors.completed, 'monitor checks ended').to.be.greaterThan(2);
    expect(report.monitors.changes, 'monitor changes announced').to.be.greaterThan(0);
    expect(report.problems, `seed ${seed}`).to.deep.equal([]);
  });
});
