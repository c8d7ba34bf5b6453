import { expect } from 'chai';
import iconv from 'iconv-lite';
import { cssExtract, decodeHtml, detectCharset, parseCssExtractor, toPlainText } from '../../../engine/outputs';

describe('toPlainText', () => {
  it('puts blocks on their own lines, paragraphs apart, and collapses whitespace', () => {
    const html = '<h1> Title </h1><p>First   <b>para</b>\n graph.</p><div>one</div><div>two <span>and</span>three</div><ul><li>a</li><li>b</li></ul><p>End</p>';
    expect(toPlainText(html)).to.equal('Title\n\nFirst para graph.\n\none\ntwo andthree\na\nb\n\nEnd');
  });

  it('separates table cells with tabs and rows with newlines', () => {
    expect(toPlainText('<p>Before</p><table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table><p>After</p>')).to.equal(
      'Before\n\nA\tB\n1\t2\n\nAfter',
    );
  });

  it('keeps preformatted text as is and turns <br> into newlines', () => {
    expect(toPlainText('<p>a<br>b<br><br>c</p><pre>  x = 1\n    y = 2</pre>')).to.equal('a\nb\n\nc\n\n  x = 1\n    y = 2');
  });

  it('leaves out script, style, template, form controls, media fallbacks and hidden elements', () => {
    const html = `<p>Keep</p><script>leak()</script><style>p{}</style><noscript>js</noscript><template>t</template><select><option>o</option></select>
      <button>b</button><textarea>typed</textarea><audio src="a.mp3">fallback</audio><div hidden>h</div><p style="visibility:hidden">v</p><p>Too</p>`;
    expect(toPlainText(html)).to.equal('Keep\n\nToo');
  });

  it('decodes entities and drops zero-width spaces', () => {
    expect(toPlainText('<h2>Options<a href="#o">&#8203;</a></h2><p>R&amp;D &lt;tag&gt; caf&eacute;&nbsp;bar</p>')).to.equal('Options\n\nR&D <tag> café bar');
  });

  it('returns an empty string for an empty page', () => {
    expect(toPlainText('')).to.equal('');
  });
});

describe('cssExtract', () => {
  const URL = 'https://shop.example/c/shoes?page=1';
  const html = `<html><body><h1> Shoes <small>(3)</small></h1><ul>
    <li class="p"><a href="/p/1">One</a><img src="1.jpg" data-id="a1"></li>
    <li class="p"><a href="/p/2">Two</a><img src="2.jpg"></li>
    <li class="p"><a>Three</a></li></ul><div class="x"><p>A</p><p>B</p></div></body></html>`;
  const run = (spec: object | string) => cssExtract(html, URL, typeof spec === 'string' ? spec : JSON.stringify(spec));

  it('gives a string for one match, an array for several and an empty array for none', () => {
    expect(run({ title: 'h1', names: 'li.p a', none: '.missing', block: 'div.x' })).to.deep.equal({
      ok: true,
      data: { title: 'Shoes (3)', names: ['One', 'Two', 'Three'], none: [], block: 'A B' },
    });
  });

  it('picks attributes with "@name", resolving URL attributes and skipping matches without it', () => {
    expect(run({ links: 'li a @href', images: 'img@src', ids: 'img @data-id' })).to.deep.equal({
      ok: true,
      data: { links: ['https://shop.example/p/1', 'https://shop.example/p/2'], images: ['https://shop.example/c/1.jpg', 'https://shop.example/c/2.jpg'], ids: 'a1' },
    });
  });

  it('keeps keys such as __proto__ as ordinary keys', () => {
    const result = run('{"__proto__": "h1"}');
    expect(result.ok && Object.keys(result.data)).to.deep.equal(['__proto__']);
  });

  it('reports a bad parameter as a RESP004 failure with a detail', () => {
    const cases: [string, RegExp][] = [
      ['{not json', /not valid JSON/],
      ['["h1"]', /must be a JSON object/],
      ['"h1"', /must be a JSON object/],
      ['null', /must be a JSON object/],
      ['{}', /at least one output key/],
      ['{"a": 1}', /key "a" must map to a non-empty CSS selector/],
      ['{"a": "  "}', /key "a" must map/],
      ['{"a": "@href"}', /key "a" has no selector/],
      ['{"a": "div[", "b": "p"}', /key "a" has an invalid CSS selector "div\["/],
      ['{"a": "p:unknown-pseudo"}', /invalid CSS selector/],
    ];
    for (const [spec, detail] of cases) {
      const result = cssExtract(html, URL, spec);
      expect(result.ok, spec).to.equal(false);
      if (!result.ok) {
        expect(result.code).to.equal('RESP004');
        expect(result.detail).to.match(detail);
      }
    }
  });

  it('validates the parameter without a page', () => {
    expect(parseCssExtractor('{"t": "h1", "l": "a @href"}')).to.deep.equal({
      ok: true,
      rules: [{ key: 't', selector: 'h1' }, { key: 'l', selector: 'a', attribute: 'href' }],
    });
  });
});

describe('decodeHtml', () => {
  const page = (charsetMeta: string, text: string, encoding: string): Buffer =>
    Buffer.concat([Buffer.from(`<html><head>${charsetMeta}</head><body>`), iconv.encode(text, encoding), Buffer.from('</body></html>')]);

  it('defaults to UTF-8', () => {
    expect(decodeHtml(Buffer.from('<p>café €</p>'))).to.equal('<p>café €</p>');
    expect(detectCharset(Buffer.from('<p>x</p>'))).to.equal('utf-8');
  });

  it('honours the Content-Type charset, reading iso-8859-1 as windows-1252 like browsers', () => {
    const body = page('', 'café €', 'windows-1252');
    expect(detectCharset(body, 'text/html; charset=ISO-8859-1')).to.equal('windows-1252');
    expect(decodeHtml(body, 'text/html; charset="iso-8859-1"')).to.contain('café €');
  });

  it('honours <meta charset> and <meta http-equiv> when the header has none', () => {
    expect(decodeHtml(page('<meta charset="shift_jis">', '日本語', 'shift_jis'), 'text/html')).to.contain('日本語');
    const httpEquiv = page('<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">', 'Привет', 'windows-1251');
    expect(decodeHtml(httpEquiv)).to.contain('Привет');
  });

  it('lets the header win over the page and a byte-order mark win over both', () => {
    const body = page('<meta charset="windows-1251">', 'café', 'utf-8');
    expect(decodeHtml(body, 'text/html; charset=utf-8')).to.contain('café');
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode('<p>ü</p>', 'utf-16le')]);
    expect(decodeHtml(utf16, 'text/html; charset=iso-8859-1')).to.equal('<p>ü</p>');
  });

  it('falls back to UTF-8 for unknown labels and for a UTF-16 label in an ASCII-readable page', () => {
    expect(detectCharset(Buffer.from('<p>x</p>'), 'text/html; charset=x-no-such')).to.equal('utf-8');
    expect(detectCharset(Buffer.from('<meta charset="utf-16"><p>x</p>'))).to.equal('utf-8');
  });
});
