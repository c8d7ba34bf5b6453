/**
 * A renderer that keeps a core busy gets the lowest CPU priority (engine/browser/demote.ts): the
 * renderer of a page whose script never yields is demoted while its render runs to the deadline, and
 * the renderers of ordinary pages rendered beside it are not.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { processConfig } from '../../base/config';
import { BrowserPool, findChromium, render } from '../../engine/browser';
import { kindOf, markedProcesses } from '../../engine/browser/processes';
import { FIXTURE_HOSTS, success, testGuard } from '../fixtures/browser/harness';
import { startFixtureServer, type FixtureServer } from '../helpers/fixtures';
import { eventually } from '../helpers/stack';

/** Nice value of a process's main thread (field 19 of its stat); undefined once gone. */
function niceOf(pid: number): number | undefined {
  try {
    const raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(raw.slice(raw.lastIndexOf(')') + 2).split(' ')[16]);
  } catch {
    return undefined;
  }
}

describe('busy renderers', function () {
  this.timeout(60_000);
  let site: FixtureServer;
  let pool: BrowserPool;
  const guard = testGuard();

  before(async () => {
    site = await startFixtureServer((req, res) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      if ((req.url ?? '').startsWith('/spin')) return void res.end('<!doctype html><html><head><script>for (;;) {}</script></head><body>never</body></html>');
      res.end('<!doctype html><html><body><h1>Ordinary</h1><script>document.body.insertAdjacentHTML("beforeend", "<p>LATE</p>")</script></body></html>');
    });
    pool = new BrowserPool({ executablePath: findChromium(processConfig().chromiumPath), maxPages: 2, retireAfterPages: 100, hostOverrides: FIXTURE_HOSTS, demoteAfterMs: 500 });
  });
  after(async () => {
    await pool.close();
    await site.close();
  });

  it('demotes the renderer of a page that never yields, and no other', async () => {
    const renderers = () => markedProcesses(new Set(pool.browserMarks())).filter((process) => !process.leader && kindOf(process.pid) === 'renderer');
    const lowest = () => renderers().filter((process) => niceOf(process.pid) === 19);
    success(await render({ url: `${site.url}ordinary`, reuseKey: 'other' }, { pool, guard }));
    const spinning = render({ url: `${site.url}spin`, reuseKey: 'spinner', timeoutMs: 10_000 }, { pool, guard });
    await eventually(async () => lowest().length === 1, 100, 100);
    // Ordinary pages of another account beside it: rendered, their renderers left as they were.
    for (let n = 0; n < 3; n++) expect(success(await render({ url: `${site.url}ordinary?n=${n}`, reuseKey: 'other' }, { pool, guard })).html).to.contain('LATE');
    expect(lowest().length, 'one renderer demoted').to.equal(1);
    expect(renderers().length, 'the others at their priority').to.be.greaterThan(1);
    const ended = await spinning;
    expect(ended.ok || ended.error.kind).to.equal('timeout');
    expect(pool.demoted).to.equal(1);
  });
});
