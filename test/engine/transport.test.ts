/**
 * The plain transport against the fixture site: browser-like and forwarded headers, bodies forwarded
 * on POST/PUT, decompression, size caps, timeouts, redirects and the final URL, connection reuse.
 */
import { expect } from 'chai';
import { startTestEngine, type TestEngine } from '../fixtures/engine';
import { PAGE_HTML, startTargetSite, type EchoReply, type TargetSite } from '../fixtures/target-site';
import { startTlsSite } from '../fixtures/tls-site';
import { DEFAULT_USER_AGENT, FAILURES, type EngineResult, type EngineSuccess } from '../../engine';

function success(result: EngineResult): EngineSuccess {
  if (!result.ok) throw new Error(`expected a response, got ${result.error.kind}: ${result.error.detail}`);
  return result;
}

const kind = (result: EngineResult): string => (result.ok ? `ok ${result.status}` : result.error.kind);
const echo = (result: EngineResult): EchoReply => JSON.parse(success(result).body.toString('utf8')) as EchoReply;

describe('engine plain transport', () => {
  let site: TargetSite;
  let test: TestEngine;

  before(async () => {
    site = await startTargetSite();
    test = startTestEngine({ FETCH_MAX_BYTES: '2mb' });
  });
  after(async () => {
    await test.engine.close();
    await site.close();
  });

  it('sends browser-like default headers', async () => {
    const { headers } = echo(await test.engine.fetch({ url: site.at('/echo') }));
    expect(headers['user-agent']).to.equal(DEFAULT_USER_AGENT);
    expect(headers['user-agent']).to.match(/Chrome\/\d+/);
    expect(headers['accept']).to.match(/^text\/html/);
    expect(headers['accept-language']).to.match(/^en-US/);
    expect(headers['accept-encoding']).to.equal('gzip, deflate, br');
    expect(headers['sec-fetch-mode']).to.equal('navigate');
  });

  it('forwards caller headers over the defaults and drops hop-by-hop ones', async () => {
    const { headers } = echo(
      await test.engine.fetch({
        url: site.at('/echo'),
        headers: [
          ['Cookie', 'session=abc'],
          ['Referer', 'https://example.com/'],
          ['User-Agent', 'fixture-agent/1.0'],
          ['Accept-Encoding', 'zstd'],
          ['Connection', 'close, x-secret'],
          ['Proxy-Authorization', 'Basic Zm9vOmJhcg=='],
          ['Host', 'evil.example'],
          ['X-Custom', 'yes'],
          ['Bad Name', 'dropped'],
        ],
      }),
    );
    expect(headers['cookie']).to.equal('session=abc');
    expect(headers['referer']).to.equal('https://example.com/');
    expect(headers['user-agent']).to.equal('fixture-agent/1.0');
    expect(headers['x-custom']).to.equal('yes');
    expect(headers['accept-encoding']).to.equal('gzip, deflate, br');
    expect(headers['proxy-authorization']).to.equal(undefined);
    expect(headers['host']).to.equal(`127.0.0.1:${site.port}`);
    expect(headers['connection']).to.not.include('x-secret');
  });

  for (const method of ['POST', 'PUT'] as const) {
    it(`forwards a ${method} body as is with the caller's Content-Type`, async () => {
      const body = Buffer.from(JSON.stringify({ query: 'shoes', page: 2 }));
      const reply = echo(await test.engine.fetch({ url: site.at('/echo'), method, body, headers: [['Content-Type', 'application/json']] }));
      expect(reply.method).to.equal(method);
      expect(reply.body).to.equal(body.toString());
      expect(reply.headers['content-type']).to.equal('application/json');
      expect(reply.headers['content-length']).to.equal(String(body.length));
    });
  }

  it('turns URL credentials into Basic auth and keeps them out of the final URL', async () => {
    const url = site.at('/echo').replace('http://', 'http://ann:p%40ss@');
    const result = await test.engine.fetch({ url });
    expect(echo(result).headers['authorization']).to.equal(`Basic ${Buffer.from('ann:p@ss').toString('base64')}`);
    expect(success(result).finalUrl).to.equal(site.at('/echo'));
  });

  it('returns the target status, headers and content type as received', async () => {
    const missing = success(await test.engine.fetch({ url: site.at('/status/404') }));
    expect(missing.status).to.equal(404);
    expect(missing.contentType).to.equal('text/html');
    const cookies = success(await test.engine.fetch({ url: site.at('/cookies') }));
    expect(cookies.headers.filter(([name]) => name === 'set-cookie').map(([, value]) => value)).to.deep.equal(['a=1; Path=/', 'b=2; Path=/']);
  });

  for (const path of ['/gzip', '/brotli', '/deflate', '/deflate-raw']) {
    it(`decodes ${path.slice(1)} bodies`, async () => {
      const result = success(await test.engine.fetch({ url: site.at(path) }));
      expect(result.body.toString('utf8')).to.equal(PAGE_HTML);
      expect(result.contentType).to.equal('text/html');
    });
  }

  it('refuses bodies over the size cap: streamed, declared, and decompressed', async () => {
    for (const path of ['/huge', '/huge-declared', '/gzip-bomb']) {
      const result = await test.engine.fetch({ url: site.at(path) });
      expect(kind(result), path).to.equal('too_large');
      if (!result.ok) expect(FAILURES[result.error.kind].code).to.equal('RESP005');
    }
    const small = await test.engine.fetch({ url: site.at('/huge?bytes=100000'), maxBytes: 50_000 });
    expect(kind(small)).to.equal('too_large');
    expect(kind(await test.engine.fetch({ url: site.at('/huge?bytes=100000') }))).to.equal('ok 200');
  });

  it('times out on headers that never come and on a body that never ends', async () => {
    const slow = await test.engine.fetch({ url: site.at('/slow-headers?ms=3000'), timeouts: { headersMs: 200 } });
    expect(kind(slow)).to.equal('timeout');
    const endless = await test.engine.fetch({ url: site.at('/endless'), timeouts: { totalMs: 400 } });
    expect(kind(endless)).to.equal('timeout');
    if (!endless.ok) expect(FAILURES[endless.error.kind].code).to.equal('CTX0002');
    const total = await test.engine.fetch({ url: site.at('/slow-headers?ms=3000'), timeouts: { totalMs: 200 } });
    expect(kind(total)).to.equal('timeout');
  });

  it('reports a cancelled fetch as aborted', async () => {
    const controller = new AbortController();
    const pending = test.engine.fetch({ url: site.at('/slow-headers?ms=3000') }, controller.signal);
    setTimeout(() => controller.abort(), 50);
    expect(kind(await pending)).to.equal('aborted');
  });

  it('follows redirect chains and reports every hop and the final URL', async () => {
    const result = success(await test.engine.fetch({ url: site.at('/redirect/3') }));
    expect(result.status).to.equal(200);
    expect(result.finalUrl).to.equal(site.at('/redirect/0'));
    expect(result.redirects).to.deep.equal([site.at('/redirect/3'), site.at('/redirect/2'), site.at('/redirect/1')]);
    const viaName = success(await test.engine.fetch({ url: site.at(`/redirect-to?url=${encodeURIComponent(`http://shop.fixture.test:${site.port}/json`)}`) }));
    expect(viaName.finalUrl).to.equal(`http://shop.fixture.test:${site.port}/json`);
  });

  it('stops redirect loops at the limit', async () => {
    const result = await test.engine.fetch({ url: site.at('/redirect-loop') });
    expect(kind(result)).to.equal('too_many_redirects');
    expect(kind(await test.engine.fetch({ url: site.at('/redirect/10') }))).to.equal('ok 200');
    expect(kind(await test.engine.fetch({ url: site.at('/redirect/11') }))).to.equal('too_many_redirects');
  });

  it('keeps POST bodies on 307/308 and turns POST into GET on 302/303', async () => {
    const post = (status: number): Promise<EngineResult> =>
      test.engine.fetch({
        url: site.at(`/redirect-to?status=${status}&url=${encodeURIComponent('/echo')}`),
        method: 'POST',
        body: Buffer.from('a=1'),
        headers: [['content-type', 'text/plain']],
      });
    for (const status of [307, 308]) {
      const reply = echo(await post(status));
      expect([reply.method, reply.body, reply.headers['content-type']], String(status)).to.deep.equal(['POST', 'a=1', 'text/plain']);
    }
    for (const status of [302, 303]) {
      const reply = echo(await post(status));
      expect([reply.method, reply.body, reply.headers['content-type']], String(status)).to.deep.equal(['GET', '', undefined]);
    }
  });

  it('drops cookies and authorization when a redirect leaves the origin', async () => {
    const other = `http://localhost:${site.port}/echo`;
    const reply = echo(
      await test.engine.fetch({
        url: site.at(`/redirect-to?url=${encodeURIComponent(other)}`),
        headers: [['cookie', 'session=abc'], ['authorization', 'Bearer x'], ['x-kept', '1']],
      }),
    );
    expect(reply.headers['cookie']).to.equal(undefined);
    expect(reply.headers['authorization']).to.equal(undefined);
    expect(reply.headers['x-kept']).to.equal('1');
  });

  it('reuses kept-alive connections across fetches', async () => {
    const ports = new Set<number>();
    for (let index = 0; index < 6; index++) {
      const reply = echo(await test.engine.fetch({ url: site.at(`/echo?reuse=${index}`) }));
      expect(reply.headers['connection']).to.equal('keep-alive');
      ports.add(reply.remotePort);
    }
    // A fetch that starts the moment the previous one ends may open a second connection; no more.
    expect(ports.size).to.be.at.most(2);
  });

  it('refuses an untrusted certificate before sending the request', async () => {
    const tls = await startTlsSite();
    try {
      for (const url of [`https://127.0.0.1:${tls.port}/`, `https://shop.fixture.test:${tls.port}/`]) {
        expect(kind(await test.engine.fetch({ url })), url).to.equal('tls_failed');
      }
      expect(tls.requests).to.equal(0);
    } finally {
      await tls.close();
    }
  });

  it('reports unreachable targets and invalid requests as typed errors', async () => {
    const closed = await test.engine.fetch({ url: 'http://127.0.0.1:1/' });
    expect(kind(closed)).to.equal('connect_failed');
    expect(kind(await test.engine.fetch({ url: 'not a url' }))).to.equal('invalid_request');
    expect(kind(await test.engine.fetch({ url: site.at('/'), method: 'DELETE' as 'GET' }))).to.equal('invalid_request');
  });

  it('reports a 101 the request did not ask for as a protocol error, with or without Upgrade', async () => {
    for (const path of ['/status/101', '/switch-protocols']) {
      const result = await test.engine.fetch({ url: site.at(path) });
      expect(result.ok ? 'ok' : result.error, path).to.deep.include({ kind: 'protocol_error', detail: 'the target switched protocols without being asked to' });
    }
    // The connection pool goes on serving the origin.
    expect((await test.engine.fetch({ url: site.at('/') })).ok).to.equal(true);
  });
});
