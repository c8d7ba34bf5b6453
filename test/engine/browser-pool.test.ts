import { expect } from 'chai';
import { config } from '../../core/config';
import { BrowserPool, findChromium, render } from '../../engine/browser';
import { markedProcesses } from '../../engine/browser/processes';
import { FIXTURE_HOSTS, success, testGuard } from '../fixtures/browser/harness';
import { startBrowserSite, startPrivateListener, type BrowserSite, type PrivateListener } from '../fixtures/browser/site';

describe('browser pool', function () {
  let site: BrowserSite;
  let privateListener: PrivateListener;
  const guard = testGuard();
  const newPool = (retireAfterPages = 100, maxPages = 2): BrowserPool =>
    new BrowserPool({ executablePath: findChromium(config().chromiumPath), maxPages, retireAfterPages, hostOverrides: FIXTURE_HOSTS });

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

  it('retires a browser after N pages and replaces it, closing the old one', async () => {
    const launched: string[] = [];
    const retired: string[] = [];
    const pool = new BrowserPool({
      executablePath: findChromium(config().chromiumPath),
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
