import { expect } from 'chai';
import { success, useHarness } from '../fixtures/browser/harness';

describe('target check inside the browser', function () {
  const h = useHarness();

  it('refuses every request a page makes to a private address: fetch, image, redirect hop, WebSocket', async () => {
    const result = success(await h.render({ url: h.site.at('/private'), wait: 500, blockResources: [] }));
    expect(result.html).to.contain('<div id="out">refused</div>');
    const refused = result.refused.map((entry) => entry.url);
    const origin = h.privateListener.origin;
    expect(refused).to.include.members([`${origin}/from-fetch`, `${origin}/pixel.png`, `${origin}/after-redirect`]);
    expect(refused.some((url) => url.startsWith(`ws://${origin.slice('http://'.length)}`))).to.equal(true);
    expect(result.refused.every((entry) => entry.reason.includes('127.0.0.2'))).to.equal(true);
    // The redirect hop was asked of the site (allowed), and its target never reached.
    expect(h.site.requests.some((request) => request.url === '/redirect-private')).to.equal(true);
    expect(h.privateListener.connections(), h.privateListener.received.join('\n')).to.equal(0);
  });

  it('refuses an iframe whose document is at a private address: not one byte reaches it', async () => {
    const result = success(await h.render({ url: h.site.at('/iframe-private'), wait: 300 }));
    expect(result.refused.map((entry) => entry.url)).to.include(`${h.privateListener.origin}/frame`);
    // Chromium opens a speculative TCP connection for a subframe navigation before the request is
    // intercepted; nothing is ever sent on it (see engine/browser/README.md).
    expect(h.privateListener.received).to.deep.equal([]);
  });

  it('refuses requests made from inside a cross-site iframe', async () => {
    const result = success(await h.render({ url: h.site.at('/frame-private'), wait: 500 }));
    expect(result.refused.map((entry) => entry.url)).to.include(`${h.privateListener.origin}/from-iframe`);
    expect(h.site.requests.some((request) => request.url === '/frame-reaching-private' && request.headers.host?.startsWith('frame.'))).to.equal(true);
    expect(h.privateListener.received).to.deep.equal([]);
  });

  it('fails as target_forbidden when the first URL or a redirect of the page itself is refused', async () => {
    const direct = await h.render({ url: `${h.privateListener.origin}/page` });
    expect(direct.ok).to.equal(false);
    if (!direct.ok) expect(direct.error.kind).to.equal('target_forbidden');
    const redirected = await h.render({ url: h.site.at('/redirect-private-page') });
    expect(redirected.ok).to.equal(false);
    if (!redirected.ok) {
      expect(redirected.error.kind).to.equal('target_forbidden');
      expect(redirected.error.url).to.equal(`${h.privateListener.origin}/page`);
    }
    expect(h.privateListener.received).to.deep.equal([]);
  });

  it('checks every URL the page asked for, the navigation first', async () => {
    const before = h.guard.checked.length;
    success(await h.render({ url: h.site.at('/resources'), wait: 200 }));
    const checked = h.guard.checked.slice(before);
    expect(checked[0]).to.equal(h.site.at('/resources'));
    expect(checked).to.include.members([h.site.at('/res/style.css'), h.site.at('/res/script.js'), h.site.at('/res/xhr.json'), h.site.at('/res/fetch.json')]);
  });
});
