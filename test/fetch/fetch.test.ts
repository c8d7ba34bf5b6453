import { expect } from 'chai';
import { startSentinel, type Sentinel } from '../fixtures/loopback';
import { PAGE_HTML, startTargetSite, type EchoReply, type TargetSite } from '../fixtures/target-site';
import { testStack } from '../helpers/stack';
import { expectProblemCode, fetchAccount, fetchClient, type FetchClient } from './helpers';

describe('Fetch over HTTP on the running service', () => {
  let site: TargetSite;
  let sentinel: Sentinel;
  let client: FetchClient;

  before(async () => {
    site = await startTargetSite();
    sentinel = await startSentinel();
  });
  after(async () => {
    await site.close();
    await sentinel.close();
  });
  beforeEach(async () => {
    client = fetchClient(testStack().urls.api, await fetchAccount());
  });

  describe('authentication', () => {
    it('answers AUTH001, AUTH002 and AUTH003 for a missing, malformed and unknown key', async () => {
      const api = testStack().urls.api;
      const url = encodeURIComponent(site.at('/'));
      const missing = await expectProblemCode(await fetch(`${api}/v1/?url=${url}`));
      expect([missing.status, missing.code]).to.deep.equal([401, 'AUTH001']);
      const malformed = await expectProblemCode(await fetch(`${api}/v1/?url=${url}&apikey=nothex`));
      expect([malformed.status, malformed.code]).to.deep.equal([401, 'AUTH002']);
      const unknown = await expectProblemCode(await fetch(`${api}/v1/?url=${url}&apikey=${'a'.repeat(40)}`));
      expect([unknown.status, unknown.code]).to.deep.equal([401, 'AUTH003']);
      expect(site.requests).to.have.length(0);
    });

    it('does not take the key from the X-API-Key header on Fetch', async () => {
      const response = await fetch(`${testStack().urls.api}/v1/?url=${encodeURIComponent(site.at('/'))}`, {
        headers: { 'X-API-Key': client.account.key },
      });
      expect((await expectProblemCode(response)).code).to.equal('AUTH001');
    });
  });

  describe('a plain fetch', () => {
    it('returns the page with the cost, concurrency, final URL and echoed target headers, charging 1 credit', async () => {
      const response = await client.fetch({ url: site.at('/redirect/2') });
      expect(response.status).to.equal(200);
      expect(await response.text()).to.equal(PAGE_HTML);
      expect(response.headers.get('content-type')).to.match(/^text\/html/);
      expect(response.headers.get('x-request-cost')).to.equal('1');
      expect(response.headers.get('x-request-credits')).to.equal('1');
      expect(response.headers.get('concurrency-limit')).to.match(/^\d+$/);
      expect(response.headers.get('concurrency-remaining')).to.match(/^\d+$/);
      expect(response.headers.get('zr-final-url')).to.equal(site.at('/redirect/0'));
      expect(response.headers.get('z-content-type')).to.match(/^text\/html/);
      expect(response.headers.get('x-request-id')).to.be.a('string');
      // The target's page from our origin: a browser opening it runs it sandboxed, in an opaque origin.
      expect(response.headers.get('content-security-policy')).to.equal('sandbox');
      expect(response.headers.get('x-content-type-options')).to.equal('nosniff');
      expect(await client.used()).to.equal(1);
    });

    it('echoes repeated target headers one by one', async () => {
      const response = await client.fetch({ url: site.at('/cookies') });
      expect(response.status).to.equal(200);
      expect(response.headers.getSetCookie()).to.deep.equal([]);
      expect(response.headers.get('z-set-cookie')).to.equal('a=1; Path=/, b=2; Path=/');
    });

    it('decodes gzip and brotli bodies', async () => {
      for (const path of ['/gzip', '/brotli']) {
        const response = await client.fetch({ url: site.at(path) });
        expect(await response.text(), path).to.equal(PAGE_HTML);
      }
    });

    it('passes JSON targets through with their content type', async () => {
      const response = await client.fetch({ url: site.at('/json') });
      expect(response.headers.get('content-type')).to.equal('application/json');
      expect(response.headers.get('content-security-policy')).to.equal('sandbox');
      expect(await response.json()).to.deep.equal({ hello: 'fixture', items: [1, 2, 3] });
    });
  });

  describe('output shapes', () => {
    it('converts to Markdown and plain text', async () => {
      const markdown = await client.fetch({ url: site.at('/'), response_type: 'markdown' });
      expect(markdown.headers.get('content-type')).to.equal('text/markdown; charset=utf-8');
      expect(await markdown.text()).to.contain('# Hello from the fixture');
      const text = await client.fetch({ url: site.at('/'), response_type: 'plaintext' });
      expect(text.headers.get('content-type')).to.equal('text/plain; charset=utf-8');
      expect((await text.text()).trim()).to.contain('Hello from the fixture');
    });

    it('extracts with css_extractor, outputs and autoparse as JSON', async () => {
      const css = await client.fetch({ url: site.at('/'), css_extractor: JSON.stringify({ heading: 'h1', title: 'title' }) });
      expect(css.headers.get('content-type')).to.match(/^application\/json/);
      expect(await css.json()).to.deep.equal({ heading: 'Hello from the fixture', title: 'Fixture page' });
      const outputs = (await (await client.fetch({ url: site.at('/'), outputs: 'headings,emails' })).json()) as Record<string, unknown>;
      expect(outputs).to.have.keys('headings', 'emails');
      const parsed = (await (await client.fetch({ url: site.at('/'), autoparse: 'TRUE' })).json()) as Record<string, unknown>;
      expect(parsed.title).to.equal('Fixture page');
    });

    it('wraps the page in the json_response envelope with the target status and headers, xhr empty without a browser', async () => {
      const response = await client.fetch({ url: site.at('/'), json_response: 'true' });
      const envelope = (await response.json()) as { html: string; status: number; headers: Record<string, string>; xhr: unknown[] };
      expect(envelope.html).to.equal(PAGE_HTML);
      expect(envelope.status).to.equal(200);
      expect(envelope.headers['content-type']).to.match(/^text\/html/);
      expect(envelope.xhr).to.deep.equal([]);
    });
  });

  describe('status semantics', () => {
    it('answers a target 404 with RESP002 and a target 500 with RESP001, charging nothing', async () => {
      const notFound = await expectProblemCode(await client.fetch({ url: site.at('/status/404') }));
      expect([notFound.status, notFound.code]).to.deep.equal([404, 'RESP002']);
      const broken = await expectProblemCode(await client.fetch({ url: site.at('/status/500') }));
      expect([broken.status, broken.code]).to.deep.equal([422, 'RESP001']);
      expect(broken.detail).to.contain('mode=auto');
      expect(await client.used()).to.equal(0);
    });

    it('answers a target that switches protocols unasked with RESP001, even with original_status', async () => {
      const switched = await expectProblemCode(await client.fetch({ url: site.at('/status/101'), original_status: 'true' }));
      expect([switched.status, switched.code]).to.deep.equal([422, 'RESP001']);
      expect(await client.used()).to.equal(0);
    });

    it('passes the target status through with original_status or allowed_status_codes, and charges it', async () => {
      const original = await client.fetch({ url: site.at('/status/404'), original_status: 'true' });
      expect(original.status).to.equal(404);
      expect(await original.text()).to.equal('<p>status page</p>');
      const allowed = await client.fetch({ url: site.at('/status/503'), allowed_status_codes: '404,503' });
      expect(allowed.status).to.equal(503);
      expect(allowed.headers.get('x-request-cost')).to.equal('1');
      expect(await client.used()).to.equal(2);
    });
  });

  describe('forwarding', () => {
    it('forwards a POST body with its content type as it came', async () => {
      const body = JSON.stringify({ query: 'shoes', page: 2 });
      const response = await client.fetch({ url: site.at('/echo') }, { method: 'POST', body, headers: { 'Content-Type': 'application/json' } });
      const echo = (await response.json()) as EchoReply;
      expect(echo.method).to.equal('POST');
      expect(echo.body).to.equal(body);
      expect(echo.headers['content-type']).to.equal('application/json');
    });

    it('forwards the caller’s headers only with custom_headers, never the service’s own', async () => {
      const headers = { 'X-Custom': 'yes', Referer: 'https://referrer.example/', 'X-Request-Id': 'trace-1' };
      const without = (await (await client.fetch({ url: site.at('/echo') }, { headers })).json()) as EchoReply;
      expect(without.headers['x-custom']).to.equal(undefined);
      const withHeaders = (await (await client.fetch({ url: site.at('/echo'), custom_headers: 'true' }, { headers })).json()) as EchoReply;
      expect(withHeaders.headers['x-custom']).to.equal('yes');
      expect(withHeaders.headers.referer).to.equal('https://referrer.example/');
      expect(withHeaders.headers['x-request-id']).to.equal(undefined);
      expect(withHeaders.url).not.to.contain('apikey');
    });
  });

  describe('target safety', () => {
    it('refuses private targets and redirects into them with REQS001, reaching nothing, charging nothing', async () => {
      const port = String(sentinel.port);
      const targets = [
        `http://127.0.0.2:${port}/`,
        `http://2130706434:${port}/`,
        `http://0x7f000002:${port}/`,
        `http://[::ffff:127.0.0.2]:${port}/`,
        site.at(`/redirect-private?port=${port}`),
      ];
      for (const url of targets) {
        const refused = await expectProblemCode(await client.fetch({ url }));
        expect([refused.status, refused.code], url).to.deep.equal([400, 'REQS001']);
      }
      expect(sentinel.connections).to.equal(0);
      expect(await client.used()).to.equal(0);
    });

    it('answers a response over the size cap with RESP005', async () => {
      const tooLarge = await expectProblemCode(await client.fetch({ url: site.at('/huge') }));
      expect([tooLarge.status, tooLarge.code]).to.deep.equal([413, 'RESP005']);
      expect(await client.used()).to.equal(0);
    });
  });

  describe('bad parameters', () => {
    const cases: Array<[string, Record<string, string>, string, string]> = [
      ['url missing', {}, 'REQS004', 'url'],
      ['url not http', { url: 'ftp://example.com/' }, 'REQS004', 'url'],
      ['a non-boolean boolean', { js_render: 'maybe' }, 'REQS004', 'js_render'],
      ['an unknown parameter', { colour: 'red' }, 'REQS004', 'colour'],
      ['wait without js_render', { wait: '100' }, 'REQS004', 'wait'],
      ['screenshot without js_render', { screenshot: 'true' }, 'REQS004', 'screenshot'],
      ['a PDF without js_render', { response_type: 'pdf' }, 'REQS004', 'response_type'],
      ['proxy_country without premium_proxy', { proxy_country: 'us' }, 'REQS004', 'proxy_country'],
      ['session_id not an integer', { session_id: 'abc' }, 'REQS004', 'session_id'],
      ['an unknown outputs kind', { outputs: 'emails,secrets' }, 'REQS004', 'outputs'],
      ['an unknown block_resources type', { js_render: 'true', block_resources: 'pictures' }, 'REQS004', 'block_resources'],
      ['bad js_instructions', { js_render: 'true', js_instructions: '[{"teleport":"#x"}]' }, 'REQS004', 'js_instructions'],
      ['screenshot_quality with png', { js_render: 'true', screenshot: 'true', screenshot_quality: '50' }, 'REQS004', 'screenshot_quality'],
      ['an allowed status code that is none', { allowed_status_codes: '404,abc' }, 'REQS004', 'allowed_status_codes'],
      ['a css_extractor that is not a JSON object', { css_extractor: '["h1"]' }, 'RESP004', 'css_extractor'],
    ];
    for (const [name, params, code, parameter] of cases) {
      it(`answers ${name} with ${code} naming ${parameter}, fetching nothing`, async () => {
        const url = params.url ?? (name === 'url missing' ? undefined : site.at('/'));
        const before = site.requests.length;
        const failure = await expectProblemCode(await client.fetch({ ...(url ? { url } : {}), ...params }));
        expect(failure.code).to.equal(code);
        expect(failure.status).to.equal(400);
        expect(failure.detail).to.contain(parameter);
        expect(site.requests.length).to.equal(before);
      });
    }

    it('answers extract on an unprepared domain with REQS007', async () => {
      const failure = await expectProblemCode(await client.fetch({ url: site.at('/'), extract: 'auto' }));
      expect([failure.status, failure.code]).to.deep.equal([403, 'REQS007']);
      expect(failure.detail).to.contain('/v1/extract/prepared-domains');
    });
  });

  describe('credits', () => {
    it('answers AUTH004 without fetching when the account has no credits left', async () => {
      const poor = fetchClient(testStack().urls.api, await fetchAccount({ credits: 1 }));
      expect((await poor.fetch({ url: site.at('/') })).status).to.equal(200);
      const before = site.requests.length;
      const refused = await expectProblemCode(await poor.fetch({ url: site.at('/') }));
      expect([refused.status, refused.code]).to.deep.equal([402, 'AUTH004']);
      expect(site.requests.length).to.equal(before);
    });
  });
});
