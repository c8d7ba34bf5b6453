import { expect } from 'chai';
import { parseBlockResources } from '../../../engine/browser';
import { parseBrowserParams, type BrowserParams } from '../../../core/fetch/browser-params';
import { FAILURES } from '../../../engine/failures';

describe('browser parameters', () => {
  it('maps render failures to the Fetch error codes', () => {
    expect(FAILURES.target_forbidden.code).to.equal('REQS001');
    expect(FAILURES.invalid_parameter.code).to.equal('REQS004');
    expect(FAILURES.timeout.code).to.equal('CTX0002');
    expect(FAILURES.browser_crashed.code).to.equal('RESP001');
  });

  it('parses the browser parameters of a Fetch request', () => {
    const parsed = parseBrowserParams(
      { wait: 500, wait_for: '#x', device: 'mobile', window_width: 800, screenshot_fullpage: true, screenshot_format: 'jpeg', screenshot_quality: 60, block_resources: 'image, font' },
      true,
    );
    expect(parsed).to.deep.equal({
      ok: true,
      value: {
        wait: 500,
        waitFor: '#x',
        blockResources: ['image', 'font'],
        device: 'mobile',
        windowWidth: 800,
        screenshot: { area: 'fullpage', format: 'jpeg', quality: 60 },
      },
    });
  });

  it('names the parameter at fault', () => {
    // Ranges, flags and enumerations are the schema's (core/fetch/params.ts): here, the rules between parameters.
    const cases: Array<[BrowserParams, boolean, string]> = [
      [{ block_resources: 'image,video' }, true, 'block_resources'],
      [{ screenshot_quality: 50 }, true, 'screenshot_quality'],
      [{ wait_for: 'div[' }, true, 'wait_for'],
      [{ js_instructions: '[{"hover": "#a"}]' }, true, 'js_instructions'],
      [{ wait_for: '#a' }, false, 'wait_for'],
      [{ wait: 0 }, false, 'wait'],
      [{ screenshot: true }, false, 'screenshot'],
      [{ response_type: 'pdf' }, false, 'response_type'],
    ];
    for (const [params, jsRender, parameter] of cases) {
      const parsed = parseBrowserParams(params, jsRender);
      expect(parsed.ok, JSON.stringify(params)).to.equal(false);
      if (!parsed.ok) expect(parsed.error).to.include({ kind: 'invalid_parameter', parameter });
    }
  });

  it('takes markdown and plain text without a browser', () => {
    for (const type of ['markdown', 'plaintext']) expect(parseBrowserParams({ response_type: type }, false).ok, type).to.equal(true);
    // A screenshot flag sent off asks for nothing a browser does.
    expect(parseBrowserParams({ screenshot: false, screenshot_fullpage: false }, false).ok).to.equal(true);
  });

  it('reads block_resources=none as blocking nothing and unset as the default', () => {
    expect(parseBlockResources('none')).to.deep.equal({ ok: true, value: [] });
    expect(parseBlockResources(undefined)).to.deep.equal({ ok: true });
  });
});
