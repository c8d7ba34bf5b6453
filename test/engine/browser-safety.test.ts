import { expect } from 'chai';
import { success, useHarness } from '../fixtures/browser/harness';
import { startSocketEcho, type SocketEcho } from '../fixtures/browser/site';

describe('target check inside the browser', function () {
  const h = useHarness();
  let echo: SocketEcho;
  before(async () => {
    echo = await startSocketEcho();
  });
  after(async () => {
    await echo?.close();
  });

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

  it('lets an allowed WebSocket through the gate, and block_resources=websocket stops it', async () => {
    const url = h.site.at(`/socket?to=${encodeURIComponent(`${echo.origin}/echo`)}`);
    const allowed = success(await h.render({ url, waitFor: '#out[data-done]' }));
    expect(allowed.html).to.contain('got ping open=true instance=true');
    expect(allowed.refused).to.deep.equal([]);
    expect(h.guard.checked).to.include(`${echo.origin}/echo`);
    expect(echo.received).to.deep.equal(['ping']);
    const blocked = success(await h.render({ url, waitFor: '#out[data-done]', blockResources: ['websocket'] }));
    expect(blocked.html).to.contain('<div id="out" data-done="yes">failed</div>');
    expect(blocked.blockedCount).to.equal(1);
    expect(echo.received).to.deep.equal(['ping']);
  });

  it('keeps a page from approving its own refused WebSocket', async () => {
    const result = success(await h.render({ url: h.site.at('/socket-forge'), waitFor: '#out[data-done]' }));
    expect(result.html).to.contain('<div id="out" data-done="yes">failed</div>');
    expect(result.refused.map((entry) => entry.url)).to.include(`${h.privateListener.origin.replace(/^http:/, 'ws:')}/forged`);
    expect(h.privateListener.connections(), h.privateListener.received.join('\n')).to.equal(0);
  });

  it('refuses WebSockets and fetches from a blank iframe, a srcdoc iframe and workers', async () => {
    const result = success(await h.render({ url: h.site.at('/socket-escape'), waitFor: '#out[data-done]' }));
    // No shared workers, no workers started by a worker and no WebSocketStream, WebTransport or WebRTC:
    // they would connect outside the request gate.
    expect(result.html.match(/<div id="out"[^<]*/)?.[0]).to.equal('<div id="out" data-done="yes">iframe:failed,shared:none,srcdoc:failed,window:undefined/undefined/undefined,worker:failed,worker:nested-undefined/undefined/undefined');
    expect(h.privateListener.connections(), h.privateListener.received.join('\n')).to.equal(0);
  });

  it('runs a page\'s classic and module workers, relative imports and fetches included', async () => {
    const result = success(await h.render({ url: h.site.at('/workers'), waitFor: '#out[data-done]' }));
    expect(result.html.match(/<div id="out"[^<]*/)?.[0]).to.equal('<div id="out" data-done="yes">lib classic true true,module /workers/module.js');
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
