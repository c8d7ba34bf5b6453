import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { eventually } from '../helpers/stack';
import { PROJECT_ROOT, processConfig } from '../../base/config';
import { BrowserPool, findChromium, render } from '../../engine/browser';
import { markedProcesses } from '../../engine/browser/processes';
import { FIXTURE_HOSTS, success, testGuard } from '../fixtures/browser/harness';
import { startBrowserSite, startPrivateListener, startResidentialProxy, type BrowserSite, type PrivateListener } from '../fixtures/browser/site';

/** The command line of a process as its arguments ('' when it is gone). */
const commandLine = (pid: number): string[] => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return [];
  }
};

describe('browser pool', function () {
  let site: BrowserSite;
  let privateListener: PrivateListener;
  const guard = testGuard();
  const newPool = (retireAfterPages = 100, maxPages = 2): BrowserPool =>
    new BrowserPool({ executablePath: findChromium(processConfig().chromiumPath), maxPages, retireAfterPages, hostOverrides: FIXTURE_HOSTS });

  before(async () => {
    privateListener = await startPrivateListener();
    site = await startBrowserSite(privateListener.origin);
  });
  after(async () => {
    await site.close();
    await privateListener.close();
  });

  it('launches lazily, reuses one browser, and leaves no Chromium process after close', async () => {
    const pool = newPool();
    try {
      expect(pool.launched).to.equal(0);
      expect(pool.processIds()).to.deep.equal([]);
      for (let i = 0; i < 3; i++) success(await render({ url: site.at('/dynamic') }, { pool, guard }));
      expect(pool.launched).to.equal(1);
      const [browser] = pool.browserInfos();
      expect(browser?.pagesServed).to.equal(3);
      expect(browser?.openPages).to.equal(0);
      expect(pool.processIds()).to.include(browser?.pid);
      expect(pool.processIds().length).to.be.greaterThan(1);
    } finally {
      await pool.close();
    }
    expect(pool.processIds()).to.deep.equal([]);
  });

  it('closes its browsers when idle past the limit, leaving no Chromium process, and renders again after', async () => {
    const pool = new BrowserPool({ executablePath: findChromium(processConfig().chromiumPath), maxPages: 2, retireAfterPages: 100, hostOverrides: FIXTURE_HOSTS, idleCloseMs: 300 });
    try {
      success(await render({ url: site.at('/dynamic') }, { pool, guard }));
      expect(pool.processIds().length).to.be.greaterThan(0);
      await eventually(async () => pool.browserInfos().length === 0 && pool.processIds().length === 0, 100, 100);
      success(await render({ url: site.at('/dynamic') }, { pool, guard }));
      expect(pool.launched).to.equal(2);
    } finally {
      await pool.close();
    }
    expect(pool.processIds()).to.deep.equal([]);
  });

  it('finds every process of a browser, its renderers and other helpers included, and none is left after close', async () => {
    const pool = newPool();
    let seen: Array<[number, string]> = [];
    try {
      await pool.withPage({}, async ({ page }) => {
        await page.goto(site.at('/dynamic'));
        seen = pool.processIds().map((pid) => [pid, commandLine(pid).join(' ')]);
      });
      // Helpers rewrite their process title: the type shows in the command line as one string.
      const types = seen.map(([, command]) => /--type=([a-z-]+)/.exec(command)?.[1] ?? 'main');
      expect(types).to.include.members(['main', 'zygote', 'renderer']);
    } finally {
      await pool.close();
    }
    expect(pool.processIds()).to.deep.equal([]);
    expect(seen.filter(([pid, command]) => commandLine(pid).join(' ') === command)).to.deep.equal([]);
  });

  it("keeps playwright's own disabled features when it adds its own", async () => {
    const pool = newPool();
    try {
      success(await render({ url: site.at('/dynamic') }, { pool, guard }));
      const args = commandLine(pool.browserInfos()[0]?.pid ?? 0);
      const lists = args.filter((arg) => arg.startsWith('--disable-features=')).map((arg) => arg.slice('--disable-features='.length).split(','));
      // Chromium takes the last switch only: it must carry every feature of the earlier ones.
      const last = lists.at(-1) ?? [];
      expect(lists.length).to.be.greaterThan(1);
      for (const earlier of lists) expect(last).to.include.members(earlier);
      expect(last).to.include('SpareRendererForSitePerProcess');
    } finally {
      await pool.close();
    }
  });

  it('offers WebGL by default, and none (no software rasterizer) with webgl off, rendering and taking screenshots either way', async () => {
    for (const webgl of [true, false]) {
      const pool = new BrowserPool({ executablePath: findChromium(processConfig().chromiumPath), maxPages: 1, retireAfterPages: 100, hostOverrides: FIXTURE_HOSTS, webgl });
      try {
        const shot = success(await render({ url: site.at('/dynamic'), screenshot: { area: 'viewport', format: 'png' } }, { pool, guard }));
        expect(shot.screenshot?.data.length ?? 0, `screenshot, webgl ${webgl}`).to.be.greaterThan(1_000);
        const seen = await pool.withPage({}, async ({ page }) => {
          await page.goto(site.at('/dynamic'));
          return page.evaluate("document.createElement('canvas').getContext('webgl') !== null");
        });
        expect(seen, `webgl ${webgl}`).to.equal(webgl);
        expect(commandLine(pool.browserInfos()[0]?.pid ?? 0).includes('--disable-software-rasterizer')).to.equal(!webgl);
      } finally {
        await pool.close();
      }
    }
  });

  it('makes the next context ahead for the common configuration, serves it to one request only, and never for a one-off pool', async () => {
    const once = newPool();
    try {
      success(await render({ url: site.at('/dynamic') }, { pool: once, guard }));
    } finally {
      await once.close();
    }
    expect(once.spares).to.deep.equal({ made: 0, used: 0, waiting: false });

    const pool = newPool(100, 1);
    const proxy = await startResidentialProxy();
    try {
      for (let i = 0; i < 5; i++) {
        // Each context is new: no cookie or storage of an earlier request.
        const result = success(await render({ url: site.at('/storage') }, { pool, guard }));
        expect(result.html).to.contain('<div id="out">{"cookie":"","stored":null}</div>');
      }
      expect(pool.spares.used).to.be.greaterThan(0);
      expect(pool.spares.used).to.be.at.most(pool.spares.made);
      // A request with its own proxy never gets a context made for others.
      const url = site.at('/', 'residential.fixture.test');
      const through = success(await render({ url, proxy: { server: proxy.url, username: proxy.username, password: proxy.password } }, { pool, guard }));
      expect(through.html).to.contain('Welcome, resident');
      expect(proxy.forwarded).to.include(url);
    } finally {
      await pool.close();
      await proxy.close();
    }
    expect(pool.processIds()).to.deep.equal([]);
  });

  it('keeps the spare only while renders that need a new context are coming', async () => {
    const pool = new BrowserPool({ executablePath: findChromium(processConfig().chromiumPath), maxPages: 2, retireAfterPages: 100, hostOverrides: FIXTURE_HOSTS, spareLifeMs: 60_000 });
    try {
      success(await render({ url: site.at('/dynamic'), reuseKey: 'account-1' }, { pool, guard }));
      expect(pool.spares).to.deep.equal({ made: 0, used: 0, waiting: false });
      // Another account's render needs a new context soon after: one is made ahead for the next such render.
      success(await render({ url: site.at('/dynamic'), reuseKey: 'account-2' }, { pool, guard }));
      expect(pool.spares).to.deep.equal({ made: 1, used: 0, waiting: true });
      // Renders with the same options now take turns on their own contexts: the spare would wait in vain.
      success(await render({ url: site.at('/dynamic'), reuseKey: 'account-1' }, { pool, guard }));
      expect(pool.reuse.reused).to.equal(1);
      expect(pool.spares).to.deep.equal({ made: 1, used: 0, waiting: false });
    } finally {
      await pool.close();
    }

    const brief = new BrowserPool({ executablePath: findChromium(processConfig().chromiumPath), maxPages: 2, retireAfterPages: 100, hostOverrides: FIXTURE_HOSTS, spareLifeMs: 500 });
    try {
      for (let i = 0; i < 3 && !brief.spares.waiting; i++) success(await render({ url: site.at('/dynamic') }, { pool: brief, guard }));
      expect(brief.spares.waiting).to.equal(true);
      // No render takes it within its life: it is closed.
      await eventually(async () => !brief.spares.waiting, 50, 100);
      expect(brief.spares.used).to.equal(0);
    } finally {
      await brief.close();
    }
  });

  it('makes no spare for a render whose reuse key has another render open', async () => {
    const pool = newPool(100, 2);
    let open = 0;
    let bothOpen!: () => void;
    const twoOpen = new Promise<void>((resolve) => (bothOpen = resolve));
    try {
      // The first pages wait until both are open, so the second asks for its context while the first holds one.
      await Promise.all(
        Array.from({ length: 2 }, () =>
          pool.withPage({ reuseKey: 'account-1', recycle: async () => true, warmable: true }, async ({ page }) => {
            if (++open === 2) bothOpen();
            await Promise.race([twoOpen, new Promise((resolve) => setTimeout(resolve, 10_000))]);
            await page.goto(site.at('/dynamic'));
          }),
        ),
      );
      expect(open).to.equal(2);
      expect(pool.spares.made).to.equal(0);
      await pool.readied();
      expect(pool.reuse.waiting).to.equal(2);
    } finally {
      await pool.close();
    }
  });

  it('keeps no more contexts, open or waiting, than page slots: a render that needs a new one closes the one waiting longest', async () => {
    const pool = newPool(100, 2);
    try {
      success(await render({ url: site.at('/dynamic'), reuseKey: 'account-1' }, { pool, guard }));
      success(await render({ url: site.at('/dynamic'), reuseKey: 'account-2' }, { pool, guard }));
      await pool.readied();
      expect(pool.reuse.waiting).to.equal(2);
      let waitingDuring = -1;
      await pool.withPage({ reuseKey: 'account-3', recycle: async () => false }, async ({ page }) => {
        waitingDuring = pool.reuse.waiting;
        await page.goto(site.at('/dynamic'));
      });
      expect(waitingDuring).to.equal(1);
      // account-1's context, the one waiting longest, was the one closed; account-2's is still there.
      success(await render({ url: site.at('/dynamic'), reuseKey: 'account-2' }, { pool, guard }));
      await pool.readied();
      expect(pool.reuse.reused).to.equal(1);
      success(await render({ url: site.at('/dynamic'), reuseKey: 'account-1' }, { pool, guard }));
      await pool.readied();
      expect(pool.reuse.reused).to.equal(1);
    } finally {
      await pool.close();
    }
  });

  it("answers before readying the account's context, and the account's next render waits for that context rather than making one", async () => {
    const pool = newPool();
    try {
      let readying = false;
      // The readying is held until the second render has asked for a page.
      let letGo!: () => void;
      const held = new Promise<void>((resolve) => (letGo = resolve));
      const first = await pool.withPage({ reuseKey: 'account-1', recycle: async () => ((readying = true), await held, true) }, async ({ page }) => {
        await page.goto(site.at('/dynamic'));
        return page.url();
      });
      expect(first).to.contain('/dynamic');
      // Answered while its context is still being readied.
      expect(readying).to.equal(true);
      expect(pool.reuse).to.deep.equal({ recycled: 0, reused: 0, waiting: 0 });
      const second = pool.withPage({ reuseKey: 'account-1', recycle: async () => true }, async ({ reused }) => reused);
      await new Promise((resolve) => setTimeout(resolve, 200));
      letGo();
      expect(await second).to.equal(true);
      await pool.readied();
      expect(pool.reuse).to.deep.equal({ recycled: 2, reused: 1, waiting: 1 });
      expect(pool.spares.made).to.equal(0);
    } finally {
      await pool.close();
    }
  });

  it('loads playwright only when it launches its first browser', () => {
    // A process of its own: this one loaded playwright long ago.
    const script = [
      "const { BrowserPool } = require('./engine/browser');",
      "new BrowserPool({ executablePath: '/nonexistent', maxPages: 1, retireAfterPages: 1 });",
      "process.stdout.write(String(Object.keys(require.cache).filter((file) => file.includes('playwright-core')).length));",
    ].join('\n');
    const loaded = execFileSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: PROJECT_ROOT, encoding: 'utf8' });
    expect(loaded.trim()).to.equal('0');
  });

  it('lets renders with the same reuse key take turns on one context, with nothing of the one before left', async () => {
    const pool = newPool();
    const stored = async (reuseKey: string): Promise<unknown> => {
      const result = success(await render({ url: site.at('/store'), waitFor: '#out[data-done]', reuseKey }, { pool, guard }));
      // The context is readied for the key's next render once this one has answered.
      await pool.readied();
      return JSON.parse(/<div id="out"[^>]*>([^<]*)</.exec(result.html)?.[1]?.replace(/&quot;/g, '"') ?? 'null');
    };
    const fresh = { cookie: '', local: null, session: null, idb: 'none', frame: { local: null, session: null } };
    try {
      expect(await stored('account-1')).to.deep.equal(fresh);
      expect(pool.reuse).to.deep.equal({ recycled: 1, reused: 0, waiting: 1 });
      // The same context and page again: every kind of storage the last render left is gone.
      expect(await stored('account-1')).to.deep.equal(fresh);
      expect(pool.reuse).to.deep.equal({ recycled: 2, reused: 1, waiting: 1 });
      // Another key never gets that context.
      expect(await stored('account-2')).to.deep.equal(fresh);
      expect(pool.reuse).to.deep.equal({ recycled: 3, reused: 1, waiting: 2 });
      // At most maxPages (2) wait: account-1's, waiting longest, makes room for account-3's.
      expect(await stored('account-3')).to.deep.equal(fresh);
      expect(pool.reuse).to.deep.equal({ recycled: 4, reused: 1, waiting: 2 });
      // A render that fails does not leave its context for the next one.
      const failed = await render({ url: site.at('/dynamic'), waitFor: '#never', timeoutMs: 1_500, reuseKey: 'account-2' }, { pool, guard });
      expect(failed.ok).to.equal(false);
      await pool.readied();
      expect(pool.reuse).to.deep.equal({ recycled: 4, reused: 2, waiting: 1 });
      expect(await stored('account-1')).to.deep.equal(fresh);
      expect(pool.reuse).to.deep.equal({ recycled: 5, reused: 2, waiting: 2 });
    } finally {
      await pool.close();
    }
    expect(pool.reuse.waiting).to.equal(0);
    expect(pool.processIds()).to.deep.equal([]);
  });

  it('retires a browser after N pages and replaces it, closing the old one', async () => {
    const launched: string[] = [];
    const retired: string[] = [];
    const pool = new BrowserPool({
      executablePath: findChromium(processConfig().chromiumPath),
      maxPages: 1,
      retireAfterPages: 2,
      hostOverrides: FIXTURE_HOSTS,
      hooks: { browserLaunched: (info) => launched.push(info.id), browserRetired: (info, reason) => retired.push(`${info.id}:${reason}`) },
    });
    try {
      for (let i = 0; i < 5; i++) success(await render({ url: site.at('/dynamic') }, { pool, guard }));
      expect(launched).to.have.length(3);
      expect(retired).to.deep.equal([`${launched[0]}:page_limit`, `${launched[1]}:page_limit`]);
      // Retired browsers close in the background once their last page is done.
      for (let i = 0; i < 50 && pool.browserInfos().length > 1; i++) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(pool.browserInfos().map((info) => info.id)).to.deep.equal([launched[2]]);
      expect(markedProcesses(new Set([launched[0] ?? '', launched[1] ?? '']))).to.deep.equal([]);
    } finally {
      await pool.close();
    }
    expect(pool.processIds()).to.deep.equal([]);
  });

  it('caps the pages open at once', async () => {
    const pool = newPool(100, 2);
    let open = 0;
    let peak = 0;
    // The first pages wait until two are open at once, so the cap is reached whatever the timing.
    let bothOpen!: () => void;
    const twoOpen = new Promise<void>((resolve) => (bothOpen = resolve));
    try {
      await Promise.all(
        Array.from({ length: 5 }, () =>
          pool.withPage({}, async ({ page }) => {
            open++;
            peak = Math.max(peak, open);
            if (open === 2) bothOpen();
            await Promise.race([twoOpen, new Promise((resolve) => setTimeout(resolve, 10_000))]);
            await page.goto(site.at('/dynamic'));
            open--;
          }),
        ),
      );
      expect(peak).to.equal(2);
    } finally {
      await pool.close();
    }
  });

  it('gives a clean browser_crashed failure when the browser is killed mid-request, and the next request works', async () => {
    const pool = newPool();
    try {
      success(await render({ url: site.at('/dynamic') }, { pool, guard }));
      const [first] = pool.browserInfos();
      expect(first?.pid).to.be.a('number');
      const pending = render({ url: site.at('/dynamic'), wait: 10_000 }, { pool, guard });
      for (let i = 0; i < 50 && (pool.browserInfos()[0]?.openPages ?? 0) === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      await new Promise((resolve) => setTimeout(resolve, 500));
      process.kill(first?.pid ?? 0, 'SIGKILL');
      const crashed = await pending;
      expect(crashed.ok).to.equal(false);
      if (!crashed.ok) expect(crashed.error.kind).to.equal('browser_crashed');
      const next = success(await render({ url: site.at('/dynamic') }, { pool, guard }));
      expect(next.html).to.contain('rendered 42');
      expect(pool.launched).to.equal(2);
      expect(markedProcesses(new Set([first?.id ?? '']))).to.deep.equal([]);
    } finally {
      await pool.close();
    }
    expect(pool.processIds()).to.deep.equal([]);
  });

  it('refuses work once closed, and a render deadline ends as timeout', async () => {
    const pool = newPool();
    try {
      const slow = await render({ url: site.at('/dynamic'), wait: 10_000, timeoutMs: 1_500 }, { pool, guard });
      expect(slow.ok).to.equal(false);
      if (!slow.ok) expect(slow.error.kind).to.equal('timeout');
      success(await render({ url: site.at('/dynamic') }, { pool, guard }));
    } finally {
      await pool.close();
    }
    const after = await render({ url: site.at('/dynamic') }, { pool, guard });
    expect(after.ok).to.equal(false);
    if (!after.ok) expect(after.error.kind).to.equal('pool_closed');
  });

  it('ends a cancelled render as aborted', async () => {
    const pool = newPool();
    try {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 700);
      const result = await render({ url: site.at('/dynamic'), wait: 10_000, signal: controller.signal }, { pool, guard });
      expect(result.ok).to.equal(false);
      if (!result.ok) expect(result.error.kind).to.equal('aborted');
    } finally {
      await pool.close();
    }
  });
});
