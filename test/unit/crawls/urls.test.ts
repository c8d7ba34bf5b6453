import { expect } from 'chai';
import { canonicalJson } from '../../../core/jobs/idempotency';
import { extractLinks } from '../../../core/crawls/links';
import { isHtml } from '../../../engine';
import { decodeResultCursor, decodeListCursor, encodeListCursor, encodeResultCursor } from '../../../core/crawls/cursor';
import { checkStartUrl, normalizeLink, passesPatterns, registrableDomain, scopeOf, startKey } from '../../../core/crawls/urls';

describe('crawl URLs', () => {
  const scope = scopeOf('http://www.shop.fixture.test:8080/start');
  const norm = (href: string, base = 'http://www.shop.fixture.test:8080/a/b') => normalizeLink(href, base, scope);
  const key = (href: string) => {
    const result = norm(href);
    return result.ok ? result.key : result.reason;
  };

  it('merges scheme, www., trailing slash, tracking parameters and fragments into one URL', () => {
    const spellings = [
      '/p/1',
      'http://www.shop.fixture.test:8080/p/1',
      'https://www.shop.fixture.test:8080/p/1',
      'http://shop.fixture.test:8080/p/1/',
      'HTTPS://SHOP.fixture.test:8080/p/1#frag',
      '/p/1?utm_source=x&utm_MEDIUM=y',
      '/p/1/?gclid=1&fbclid=2#a',
      '../p/1',
    ];
    const normalized = spellings.map((href) => norm(href, 'http://www.shop.fixture.test:8080/x/'));
    for (const result of normalized) expect(result).to.deep.include({ ok: true, key: 'shop.fixture.test:8080/p/1', url: 'http://www.shop.fixture.test:8080/p/1' });
  });

  it('fetches each URL with the path it was linked with (its trailing slash), on the presented scheme and host', () => {
    const fetched = (href: string) => {
      const result = norm(href, 'http://www.shop.fixture.test:8080/x/');
      return result.ok ? result.fetch : undefined;
    };
    expect(fetched('/p/1/')).to.equal('http://www.shop.fixture.test:8080/p/1/');
    expect(fetched('https://shop.fixture.test:8080/p/1/#reviews')).to.equal('http://www.shop.fixture.test:8080/p/1/');
    expect(fetched('/p/1?utm_source=x&a=1')).to.equal('http://www.shop.fixture.test:8080/p/1?a=1');
  });

  it('keeps other query parameters, in their order and spelling', () => {
    expect(norm('/search?b=2&utm_campaign=z&a=1').ok && norm('/search?b=2&utm_campaign=z&a=1')).to.deep.include({ url: 'http://www.shop.fixture.test:8080/search?b=2&a=1' });
    expect(key('/search?q=a+b')).to.equal('shop.fixture.test:8080/search?q=a+b');
    expect(key('/search?utm_source=only')).to.equal('shop.fixture.test:8080/search');
  });

  it('presents other hosts of the domain without www. and with the start scheme', () => {
    expect(norm('https://www.blog.fixture.test:8080/post/1/')).to.deep.equal({
      ok: true,
      key: 'blog.fixture.test:8080/post/1',
      url: 'http://blog.fixture.test:8080/post/1',
      fetch: 'http://blog.fixture.test:8080/post/1/',
    });
    expect(norm('http://fixture.test:8080/')).to.deep.include({ ok: true, url: 'http://fixture.test:8080/' });
  });

  it('keeps the root slash and tells ports apart', () => {
    expect(key('http://shop.fixture.test:8080')).to.equal('shop.fixture.test:8080/');
    expect(key('http://shop.fixture.test:9090/')).to.equal('shop.fixture.test:9090/');
  });

  it('stays on the registrable domain, subdomains included', () => {
    expect(key('http://elsewhere.test/')).to.equal('out_of_scope');
    expect(key('https://example.org/')).to.equal('out_of_scope');
    expect(key('http://127.0.0.1:8080/')).to.equal('out_of_scope');
    expect(key('http://deep.sub.fixture.test/x')).to.equal('deep.sub.fixture.test/x');
    expect(registrableDomain('www.example.co.uk')).to.equal('example.co.uk');
    expect(registrableDomain('a.b.github.io')).to.equal('b.github.io');
    expect(registrableDomain('10.0.0.1')).to.equal(null);
  });

  it('skips links longer than 2,048 characters, other schemes and credentials', () => {
    expect(key(`/p?q=${'x'.repeat(2100)}`)).to.equal('too_long');
    expect(key(`/p?q=${'x'.repeat(1900)}`)).to.match(/^shop/);
    expect(key('mailto:a@fixture.test')).to.equal('scheme');
    expect(key('ftp://shop.fixture.test/')).to.equal('scheme');
    expect(key('http://user:pw@shop.fixture.test/')).to.equal('invalid');
    expect(key('http://[')).to.equal('invalid');
  });

  it('gives the start URL its key, so links back to it are duplicates', () => {
    expect(startKey('https://shop.fixture.test:8080/?utm_source=a')).to.equal('shop.fixture.test:8080/');
  });

  it('applies include and exclude patterns', () => {
    expect(passesPatterns('http://x.test/blog/1', [], [])).to.equal(true);
    expect(passesPatterns('http://x.test/blog/1', ['/blog/'], [])).to.equal(true);
    expect(passesPatterns('http://x.test/shop/1', ['/blog/', '/news/'], [])).to.equal(false);
    expect(passesPatterns('http://x.test/blog/draft', ['/blog/'], ['draft'])).to.equal(false);
  });

  it('checks start URLs: public http(s) host names of at most 2,048 characters', () => {
    expect(checkStartUrl('https://www.fixture.test/a')).to.include({ ok: true, domain: 'fixture.test' });
    for (const bad of ['http://127.0.0.1/', 'http://[::1]/', 'http://10.1.2.3/', 'http://localhost:8080/', 'http://printer.local/', 'http://db.internal/', 'http://intranet/', 'ftp://fixture.test/', 'not a url', `http://fixture.test/${'a'.repeat(2049)}`]) {
      expect(checkStartUrl(bad).ok, bad).to.equal(false);
    }
  });

  it('extracts links of anchors and areas, honouring <base>', () => {
    const html = `<html><head><base href="http://other.fixture.test/dir/"></head><body>
      <a href="a">A</a><a href="#top">skip</a><a href="javascript:void(0)">skip</a><a>none</a>
      <map><area href="/b"></map><A HREF="c">upper</A><script>var x = '<a href="/not-a-link">';</script></body></html>`;
    const links = extractLinks(html, 'http://www.fixture.test/page');
    expect(links.base).to.equal('http://other.fixture.test/dir/');
    expect(links.hrefs).to.deep.equal(['a', '/b', 'c']);
    expect(extractLinks('<a href="/1"></a><a href="/2"></a><a href="/3"></a>', 'http://x.test/', 2).hrefs).to.have.length(2);
  });

  it('recognises HTML', () => {
    expect(isHtml({ contentType: 'text/html; charset=utf-8', body: Buffer.from('') })).to.equal(true);
    expect(isHtml({ contentType: 'application/xhtml+xml', body: Buffer.from('') })).to.equal(true);
    expect(isHtml({ contentType: 'application/pdf', body: Buffer.from('<html>') })).to.equal(false);
    expect(isHtml({ body: Buffer.from('  <!DOCTYPE html><p>') })).to.equal(true);
    expect(isHtml({ body: Buffer.from('%PDF-1.7') })).to.equal(false);
    expect(isHtml({ contentType: 'application/json', body: Buffer.from('{}'), rendered: true })).to.equal(true);
  });

  it('binds result cursors to their crawl', () => {
    const cursor = encodeResultCursor('c_abc123', { batch: 2, commit: 3, offset: 40 });
    expect(decodeResultCursor('c_abc123', cursor)).to.deep.equal({ ok: true, position: { batch: 2, commit: 3, offset: 40 } });
    expect(decodeResultCursor('c_other1', cursor)).to.deep.equal({ ok: false, reason: 'other_crawl' });
    expect(decodeResultCursor('c_abc123', 'garbage!')).to.deep.equal({ ok: false, reason: 'malformed' });
    expect(decodeListCursor(encodeListCursor('c_abc123'))).to.equal('c_abc123');
    expect(decodeListCursor(cursor)).to.equal(undefined);
  });

  it('compares bodies regardless of key order', () => {
    expect(canonicalJson({ b: 1, a: [1, { d: 2, c: 3 }] })).to.equal(canonicalJson({ a: [1, { c: 3, d: 2 }], b: 1 }));
    expect(canonicalJson({ a: 1 })).to.not.equal(canonicalJson({ a: '1' }));
  });
});
