/**
 * Fetch with js_render through the running service: real Chromium in the API process, the browser
 * fixture site on `*.fixture.test` names (HOST_OVERRIDES), billing at 5 credits.
 */
import { expect } from 'chai';
import { startBrowserSite, startPrivateListener, type BrowserSite, type PrivateListener } from '../fixtures/browser/site';
import { testStack } from '../helpers/stack';
import { expectProblemCode, fetchAccount, fetchClient, type FetchClient } from './helpers';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describe('Fetch with js_render on the running service', () => {
  let site: BrowserSite;
  let privateListener: PrivateListener;
  let client: FetchClient;

  before(async () => {
    privateListener = await startPrivateListener();
    site = await startBrowserSite(privateListener.origin);
  });
  after(async () => {
    await site.close();
    await privateListener.close();
  });
  beforeEach(async () => {
    client = fetchClient(testStack().urls.api, await fetchAccount());
  });

  it('returns the HTML after scripts ran and charges 5 credits', async () => {
    const response = await client.fetch({ url: site.at('/dynamic'), js_render: 'true' });
    expect(response.status).to.equal(200);
    expect(await response.text()).to.contain('rendered 42');
    expect(response.headers.get('x-request-cost')).to.equal('5');
    expect(response.headers.get('x-auto-configuration')).to.equal('js_render=true&premium_proxy=false');
    expect(await client.used()).to.equal(5);
  });

  it('runs js_instructions and reports them in json_response with the XHR calls the page made', async () => {
    const instructions = JSON.stringify([{ click: '#reveal' }, { wait_for: '#secret:not(:empty)' }]);
    const response = await client.fetch({ url: site.at('/click'), js_render: 'true', js_instructions: instructions, json_response: 'true' });
    expect(response.status).to.equal(200);
    const envelope = (await response.json()) as {
      html: string;
      xhr: Array<{ url: string; method: string; status: number; body: string }>;
      js_instructions_report: unknown;
    };
    expect(envelope.html).to.contain('the secret is 7');
    const call = envelope.xhr.find((entry) => entry.url.endsWith('/api/secret'));
    expect(call?.status).to.equal(200);
    expect(call?.body).to.contain('the secret is 7');
    expect(envelope.js_instructions_report).to.not.equal(undefined);
  });

  it('answers a screenshot as a PNG image', async () => {
    const response = await client.fetch({ url: site.at('/dynamic'), js_render: 'true', screenshot: 'true' });
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.equal('image/png');
    const image = Buffer.from(await response.arrayBuffer());
    expect(image.subarray(0, 8).equals(PNG)).to.equal(true);
    expect(image.readUInt32BE(16), 'width').to.be.greaterThan(0);
  });

  it('renders response_type=pdf to a PDF', async () => {
    const response = await client.fetch({ url: site.at('/dynamic'), js_render: 'true', response_type: 'pdf' });
    expect(response.headers.get('content-type')).to.equal('application/pdf');
    const pdf = Buffer.from(await response.arrayBuffer());
    expect(pdf.subarray(0, 4).toString('latin1')).to.equal('%PDF');
    expect(pdf.toString('latin1')).to.match(/\/Type\s*\/Page[^s]/);
  });

  it('keeps the page’s requests to private addresses from leaving the browser', async () => {
    const response = await client.fetch({ url: site.at('/private'), js_render: 'true' });
    expect(response.status).to.equal(200);
    expect(privateListener.connections()).to.equal(0);
  });

  it('answers a page that moves itself to a private address as it answers such a redirect: REQS001, free, no internal URL', async () => {
    const redirected = await expectProblemCode(await client.fetch({ url: site.at('/redirect-private-page'), js_render: 'true' }));
    expect([redirected.status, redirected.code]).to.deep.equal([400, 'REQS001']);
    for (const path of ['/move-private-meta', '/move-private-script']) {
      const response = await client.fetch({ url: site.at(path), js_render: 'true' });
      expect(response.headers.get('zr-final-url') ?? '', path).to.not.match(/^chrome-error:/);
      const failure = await expectProblemCode(response);
      expect([failure.status, failure.code], path).to.deep.equal([400, 'REQS001']);
      expect(failure.detail).to.not.contain('chrome-error');
    }
    expect(privateListener.connections()).to.equal(0);
    expect(await client.used()).to.equal(0);
  });

  it('bounds wait_for, answers RESP008 naming the selector, charges nothing, and refuses an invalid selector before any browser', async () => {
    const missing = await expectProblemCode(await client.fetch({ url: site.at('/dynamic'), js_render: 'true', wait_for: '#never-there' }));
    expect([missing.status, missing.code, missing.parameter]).to.deep.equal([400, 'RESP008', 'wait_for']);
    expect(missing.detail).to.contain('#never-there');
    // Not a block: mode=auto does not climb to other configurations to wait again.
    const auto = await expectProblemCode(await client.fetch({ url: site.at('/dynamic'), mode: 'auto', wait_for: '#never-there' }));
    expect([auto.status, auto.code]).to.deep.equal([400, 'RESP008']);
    const invalid = await expectProblemCode(await client.fetch({ url: `${privateListener.origin}/page`, js_render: 'true', wait_for: 'div[' }));
    expect([invalid.status, invalid.code, invalid.parameter]).to.deep.equal([400, 'REQS004', 'wait_for']);
    expect(privateListener.connections()).to.equal(0);
    expect(await client.used()).to.equal(0);
  });

  it('refuses a private start URL before a browser is used, charging nothing', async () => {
    const failure = await expectProblemCode(await client.fetch({ url: `${privateListener.origin}/page`, js_render: 'true' }));
    expect([failure.status, failure.code]).to.deep.equal([400, 'REQS001']);
    expect(privateListener.connections()).to.equal(0);
    expect(await client.used()).to.equal(0);
  });
});
