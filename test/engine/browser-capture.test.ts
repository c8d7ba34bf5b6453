import { expect } from 'chai';
import { success, useHarness } from '../fixtures/browser/harness';

/** Format and pixel size from the image's own header. */
function imageInfo(data: Buffer): { format: 'png' | 'jpeg'; width: number; height: number } {
  if (data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) {
    return { format: 'png', width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
  }
  if (data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) {
    for (let at = 2; at < data.length - 9; ) {
      if (data[at] !== 0xff) throw new Error('corrupt JPEG');
      const marker = data[at + 1] ?? 0;
      const length = data.readUInt16BE(at + 2);
      if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) {
        return { format: 'jpeg', height: data.readUInt16BE(at + 5), width: data.readUInt16BE(at + 7) };
      }
      at += 2 + length;
    }
  }
  throw new Error('neither PNG nor JPEG');
}

describe('screenshots, PDF and captured XHR', function () {
  const h = useHarness();

  it('takes an above-the-fold PNG of the window size', async () => {
    const result = success(await h.render({ url: h.site.at('/box'), windowWidth: 800, windowHeight: 600, screenshot: { area: 'viewport', format: 'png' } }));
    expect(result.screenshot?.contentType).to.equal('image/png');
    expect(imageInfo(result.screenshot?.data ?? Buffer.alloc(0))).to.deep.equal({ format: 'png', width: 800, height: 600 });
    expect(result.html).to.contain('id="box"');
  });

  it('takes a full-page JPEG with the asked quality, cut at the height cap', async () => {
    const shot = async (quality: number): Promise<Buffer> => {
      const result = success(
        await h.render({ url: h.site.at('/tall'), windowWidth: 400, windowHeight: 300, screenshot: { area: 'fullpage', format: 'jpeg', quality } }, { screenshotMaxHeight: 4_000 }),
      );
      expect(result.screenshot?.contentType).to.equal('image/jpeg');
      expect(result.screenshot?.clipped).to.equal(true);
      return result.screenshot?.data ?? Buffer.alloc(0);
    };
    const low = await shot(10);
    const high = await shot(95);
    expect(imageInfo(low)).to.deep.equal({ format: 'jpeg', width: 400, height: 4_000 });
    expect(imageInfo(high)).to.deep.equal({ format: 'jpeg', width: 400, height: 4_000 });
    expect(high.length).to.be.greaterThan(low.length);
  });

  it('takes a full page shorter than the cap whole', async () => {
    const result = success(await h.render({ url: h.site.at('/printable'), windowWidth: 500, windowHeight: 300, screenshot: { area: 'fullpage', format: 'png' } }));
    const info = imageInfo(result.screenshot?.data ?? Buffer.alloc(0));
    expect(info.width).to.equal(500);
    expect(info.height).to.be.greaterThan(300);
    expect(result.screenshot?.clipped).to.equal(false);
  });

  it('takes one element, below the fold, at its own size; an element taller than the cap is cut', async () => {
    const box = success(await h.render({ url: h.site.at('/box'), screenshot: { area: 'element', selector: '#box', format: 'png' } }));
    expect(imageInfo(box.screenshot?.data ?? Buffer.alloc(0))).to.deep.equal({ format: 'png', width: 300, height: 120 });
    const wide = success(await h.render({ url: h.site.at('/box'), screenshot: { area: 'element', selector: '#wide', format: 'png' } }, { screenshotMaxHeight: 1_000 }));
    expect(imageInfo(wide.screenshot?.data ?? Buffer.alloc(0))).to.deep.equal({ format: 'png', width: 200, height: 1_000 });
    expect(wide.screenshot?.clipped).to.equal(true);
    // A missing element is reported after an action's wait, long before the render's deadline.
    const missing = await h.render(
      { url: h.site.at('/box'), screenshot: { area: 'element', selector: '#nothing', format: 'png' }, timeoutMs: 30_000 },
      { actionTimeoutMs: 1_000 },
    );
    expect(missing.ok ? 'rendered' : missing.error.kind).to.equal('selector_not_found');
  });

  it('takes a mobile screenshot at the device pixel ratio', async () => {
    const result = success(await h.render({ url: h.site.at('/device'), device: 'mobile', screenshot: { area: 'viewport', format: 'png' } }));
    const info = imageInfo(result.screenshot?.data ?? Buffer.alloc(0));
    expect(info.width).to.be.within(1081, 1082);
    expect(info.height).to.be.within(2401, 2402);
  });

  it('renders the page as a PDF with its pages', async () => {
    const result = success(await h.render({ url: h.site.at('/printable'), pdf: true }));
    const pdf = result.pdf ?? Buffer.alloc(0);
    expect(pdf.subarray(0, 5).toString('latin1')).to.equal('%PDF-');
    const pages = pdf.toString('latin1').match(/\/Type\s*\/Page\b/g) ?? [];
    expect(pages.length).to.be.at.least(6);
  });

  it('captures the XHR and fetch calls of the page with headers and bodies, cutting long bodies', async () => {
    const result = success(await h.render({ url: h.site.at('/xhr'), captureXhr: true, waitFor: '#out[data-big="done"]' }, { xhrBodyLimit: 64 * 1024 }));
    const calls = result.xhr ?? [];
    const byPath = (path: string) => calls.find((call) => new URL(call.url).pathname === path);
    const data = byPath('/api/data');
    expect(data).to.include({ method: 'GET', status: 200 });
    expect(data?.request_headers['x-trace']).to.equal('t-1');
    expect(data?.response_headers['x-api']).to.equal('data');
    expect(JSON.parse(data?.body ?? '{}')).to.deep.equal({ kind: 'xhr', items: [1, 2, 3] });
    const echo = byPath('/api/echo');
    expect(echo).to.include({ method: 'POST', status: 200 });
    expect(echo?.request_headers['content-type']).to.equal('application/json');
    expect(JSON.parse(echo?.body ?? '{}')).to.deep.equal({ method: 'POST', body: '{"hello":"world"}' });
    const big = byPath('/api/big');
    expect(big?.body).to.have.length(64 * 1024);
    expect(big?.body_truncated).to.equal(true);
    expect(result.html).to.contain('echo {"hello":"world"}');
  });
});
