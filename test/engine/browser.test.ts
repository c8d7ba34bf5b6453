import { expect } from 'chai';
import { startResidentialProxy, RESIDENTIAL_MARK } from '../fixtures/browser/site';
import { success, useHarness } from '../fixtures/browser/harness';

describe('browser render', function () {
  const h = useHarness();

  it('returns the HTML after scripts ran, with the final URL, status and headers', async () => {
    const result = success(await h.render({ url: h.site.at('/redirect-ok') }));
    expect(result.html).to.contain('rendered 42');
    expect(result.finalUrl).to.equal(h.site.at('/dynamic'));
    expect(result.status).to.equal(200);
    expect(result.headers).to.deep.include(['content-type', 'text/html; charset=utf-8']);
  });

  it("keeps the target's own status", async () => {
    const result = success(await h.render({ url: h.site.at('/status?code=404') }));
    expect(result.status).to.equal(404);
    expect(result.headers).to.deep.include(['x-fixture', 'status']);
  });

  it('waits for a wait_for selector, and fails cleanly when it never appears', async () => {
    const found = success(await h.render({ url: h.site.at('/late'), waitFor: '#late' }));
    expect(found.html).to.contain('arrived late');
    const missing = await h.render({ url: h.site.at('/dynamic'), waitFor: '#never', timeoutMs: 3_000 });
    expect(missing.ok).to.equal(false);
    if (!missing.ok) expect(missing.error.kind).to.be.oneOf(['selector_not_found', 'timeout']);
  });

  it('fails a document whose body cannot be decoded at once, not at the deadline', async () => {
    // Chromium commits the navigation, then drops the body: DOMContentLoaded never comes.
    const result = await h.render({ url: h.site.at('/bad-gzip'), timeoutMs: 30_000 });
    expect(result.ok ? 'rendered' : result.error).to.deep.include({
      kind: 'navigation_failed',
      detail: 'the page could not be loaded (ERR_CONTENT_DECODING_FAILED)',
    });
  });

  it('waits the given milliseconds after load', async () => {
    const result = success(await h.render({ url: h.site.at('/late'), wait: 800 }));
    expect(result.html).to.contain('arrived late');
  });

  it('carries the caller’s headers and cookies into the page', async () => {
    const result = success(
      await h.render({
        url: h.site.at('/cookies'),
        headers: [
          ['Cookie', 'session=abc; theme=dark'],
          ['X-Caller', 'yes'],
          ['User-Agent', 'FixtureAgent/1.0'],
          ['Referer', 'http://ref.fixture.test/'],
        ],
      }),
    );
    expect(result.html).to.match(/session=abc; theme=dark/);
    const seen = h.site.requests.filter((request) => request.url === '/cookies').at(-1);
    expect(seen?.headers['x-caller']).to.equal('yes');
    expect(seen?.headers['user-agent']).to.equal('FixtureAgent/1.0');
    expect(seen?.headers.referer).to.equal('http://ref.fixture.test/');
    expect(seen?.headers.cookie).to.contain('session=abc');
  });

  it('forwards a POST body with its content type to the first navigation', async () => {
    const result = success(
      await h.render({ url: h.site.at('/echo'), method: 'POST', body: Buffer.from('{"q":1}'), headers: [['Content-Type', 'application/json']] }),
    );
    const echoed = JSON.parse(/<pre id="echo">([\s\S]*?)<\/pre>/.exec(result.html)?.[1]?.replace(/&lt;/g, '<') ?? '{}') as {
      method: string;
      body: string;
      headers: Record<string, string>;
    };
    expect(echoed.method).to.equal('POST');
    expect(echoed.body).to.equal('{"q":1}');
    expect(echoed.headers['content-type']).to.equal('application/json');
  });

  it('emulates a mobile device and honours window_width and window_height', async () => {
    const mobile = success(await h.render({ url: h.site.at('/device'), device: 'mobile' }));
    const seen = JSON.parse(/<div id="out">([^<]*)</.exec(mobile.html)?.[1] ?? '{}') as { ua: string; width: number; touch: boolean };
    expect(seen.ua).to.contain('Mobile');
    expect(seen.ua).not.to.contain('Headless');
    expect(seen.width).to.equal(412);
    expect(seen.touch).to.equal(true);
    const desktop = success(await h.render({ url: h.site.at('/device'), windowWidth: 1024, windowHeight: 700 }));
    const sized = JSON.parse(/<div id="out">([^<]*)</.exec(desktop.html)?.[1] ?? '{}') as { width: number; height: number; touch: boolean };
    expect(sized).to.include({ width: 1024, height: 700, touch: false });
  });

  it('blocks image, media and font by default and exactly the listed types when asked', async () => {
    const fetched = (): string[] => h.site.requests.map((request) => request.url).filter((url) => url.startsWith('/res/'));
    const before = fetched().length;
    const byDefault = success(await h.render({ url: h.site.at('/resources'), wait: 300 }));
    const defaults = fetched().slice(before);
    expect(defaults).to.include.members(['/res/style.css', '/res/script.js', '/res/fetch.json', '/res/xhr.json']);
    expect(defaults).not.to.include.members(['/res/image.png']);
    expect(defaults.some((url) => url.startsWith('/res/media') || url.startsWith('/res/font'))).to.equal(false);
    expect(byDefault.blockedCount).to.be.greaterThan(0);

    const mark = fetched().length;
    success(await h.render({ url: h.site.at('/resources'), blockResources: ['script', 'stylesheet', 'fetch'], wait: 300 }));
    const chosen = fetched().slice(mark);
    expect(chosen).to.include.members(['/res/image.png', '/res/xhr.json']);
    expect(chosen).not.to.include.members(['/res/script.js', '/res/style.css', '/res/fetch.json']);

    const last = fetched().length;
    success(await h.render({ url: h.site.at('/resources'), blockResources: [], wait: 300 }));
    expect(fetched().slice(last)).to.include.members(['/res/image.png', '/res/style.css', '/res/script.js']);
  });

  it('uses a proxy per context, with credentials, while other contexts go direct', async () => {
    const proxy = await startResidentialProxy();
    try {
      const url = h.site.at('/', 'residential.fixture.test');
      const [through, direct] = await Promise.all([
        h.render({ url, proxy: { server: proxy.url, username: proxy.username, password: proxy.password } }),
        h.render({ url }),
      ]);
      expect(success(through).html).to.contain('Welcome, resident');
      expect(success(direct).status).to.equal(403);
      expect(proxy.forwarded).to.include(url);
      expect(h.site.requests.some((request) => request.headers[RESIDENTIAL_MARK] === 'yes')).to.equal(true);
    } finally {
      await proxy.close();
    }
  });

});
