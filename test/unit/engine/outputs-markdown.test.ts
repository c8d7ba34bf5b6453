import { expect } from 'chai';
import { toMarkdown } from '../../../engine/outputs';

const URL = 'https://site.example/docs/guide/page.html';
const md = (body: string, url = URL): string => toMarkdown(`<html><head><title>T</title></head><body>${body}</body></html>`, url);

describe('toMarkdown', () => {
  it('renders headings, paragraphs and emphasis', () => {
    expect(md('<h1>Title</h1><p>Some <strong>bold</strong>, <em>italic</em> and <del>old</del> text.</p><h3> Sub </h3>')).to.equal(
      '# Title\n\nSome **bold**, *italic* and ~~old~~ text.\n\n### Sub',
    );
  });

  it('makes every link absolute against the page URL and drops links without a target or text', () => {
    expect(
      md('<p><a href="/a">A</a> <a href="../b?x=1#f">B</a> <a href="https://o.example/c">C</a> <a href="javascript:void(0)">J</a> <a href="#top"><svg></svg></a> <a href="#s">S</a></p>'),
    ).to.equal('[A](https://site.example/a) [B](https://site.example/docs/b?x=1#f) [C](https://o.example/c) J [S](https://site.example/docs/guide/page.html#s)');
  });

  it('resolves against <base href> when the page sets one', () => {
    const html = '<html><head><base href="https://cdn.example/assets/"></head><body><a href="x.html">X</a> <img src="i.png" alt="I"></body></html>';
    expect(toMarkdown(html, URL)).to.equal('[X](https://cdn.example/assets/x.html) ![I](https://cdn.example/assets/i.png)');
  });

  it('keeps spaces outside emphasis and link text', () => {
    expect(md('<p>a<b> b </b>c <a href="/x"> link </a>d<i></i></p>')).to.equal('a **b** c [link](https://site.example/x) d');
  });

  it('nests lists with the indentation their markers need', () => {
    const html = '<ul><li>One<ul><li>One.a</li><li>One.b<ol start="3"><li>deep</li><li>deeper</li></ol></li></ul></li><li>Two</li></ul>';
    expect(md(html)).to.equal('- One\n  - One.a\n  - One.b\n    3. deep\n    4. deeper\n- Two');
  });

  it('puts a list nested directly in a list under the previous item and skips empty items', () => {
    expect(md('<ol><li>a</li><ul><li>b</li></ul><li><a href="/x"><svg></svg></a></li><li>c</li></ol>')).to.equal('1. a\n   - b\n2. c');
  });

  it('indents code and paragraphs inside list items (loose list)', () => {
    expect(md('<ol><li><p>Run:</p><pre><code class="language-sh">make\nmake test</code></pre></li><li><p>Done</p></li></ol>')).to.equal(
      '1. Run:\n\n   ```sh\n   make\n   make test\n   ```\n\n2. Done',
    );
  });

  it('renders task lists', () => {
    expect(md('<ul><li><input type="checkbox" checked> done</li><li><input type="checkbox"> todo</li></ul>')).to.equal('- [x] done\n- [ ] todo');
  });

  it('renders GFM tables with alignment, escaped pipes, inline markup and spans', () => {
    const html = `<table><caption>Caption</caption><thead><tr><th align="left">Name</th><th style="text-align: right">Size</th><th>Note</th></tr></thead>
      <tbody><tr><td><code>a|b</code></td><td>1</td><td>x <b>y</b><br>z</td></tr><tr><td colspan="2">wide</td><td>w</td></tr></tbody></table>`;
    expect(md(html)).to.equal(
      'Caption\n\n| Name | Size | Note |\n| :--- | ---: | --- |\n| `a\\|b` | 1 | x **y**<br>z |\n| wide |  | w |',
    );
  });

  it('uses the first row as header when a table has none, and merges several header rows', () => {
    expect(md('<table><tr><td>a</td><td>b</td></tr><tr><td>1</td><td>2</td></tr></table>')).to.equal('| a | b |\n| --- | --- |\n| 1 | 2 |');
    const twoRows = '<table><thead><tr><th colspan="2">Size</th><th rowspan="2">Length</th></tr><tr><th>UK</th><th>EU</th></tr></thead><tbody><tr><td>7</td><td>41</td><td>25</td></tr></tbody></table>';
    expect(md(twoRows)).to.equal('| Size UK | Size EU | Length |\n| --- | --- | --- |\n| 7 | 41 | 25 |');
  });

  it('renders layout tables as ordinary blocks', () => {
    expect(md('<table role="presentation"><tr><td><p>Left</p></td><td><p>Right</p></td></tr></table>')).to.equal('Left\n\nRight');
    expect(md('<table><tr><td><table><tr><td>x</td><td>y</td></tr></table></td></tr></table>')).to.equal('| x | y |\n| --- | --- |');
  });

  it('fences code with the language from the block or its wrapper, keeping whitespace and <br> lines', () => {
    expect(md('<pre><code class="language-ts">const a = 1;\n\n  if (a &lt; 2) {}\n</code></pre>')).to.equal('```ts\nconst a = 1;\n\n  if (a < 2) {}\n```');
    expect(md('<div class="highlight-python"><div class="highlight"><pre><span>x</span> = <span>1</span></pre></div></div>')).to.equal('```python\nx = 1\n```');
    expect(md('<pre class="prism-code language-bash"><code><span>a</span><br><span>b</span><button>Copy</button></code></pre>')).to.equal('```bash\na\nb\n```');
    expect(md('<pre>has ``` inside</pre>')).to.equal('````\nhas ``` inside\n````');
  });

  it('writes inline code with a fence longer than its backtick runs', () => {
    expect(md('<p>Use <code>a`b</code> or <kbd>Ctrl</kbd> and <code>*x*</code>.</p>')).to.equal('Use ``a`b`` or `Ctrl` and `*x*`.');
  });

  it('renders blockquotes, nested ones too, and horizontal rules', () => {
    expect(md('<blockquote><p>Outer</p><blockquote><p>Inner</p></blockquote></blockquote><hr><p>After</p>')).to.equal('> Outer\n>\n> > Inner\n\n---\n\nAfter');
  });

  it('renders images with alt text, lazy sources, and leaves out pixels and inline data', () => {
    const html = `<img src="a.png" alt="A [1]"> <img src="data:image/gif;base64,AAAA" data-src="/lazy.jpg" alt="L">
      <img src="/p.gif" width="1" height="1" alt=""><img src="data:image/png;base64,AAAA" alt="gone"><img srcset="s.jpg 480w, b.jpg 960w" alt="S">
      <img class="emoji" src="/e/tada.png" alt=":tada:">`;
    expect(md(html)).to.equal(
      '![A \\[1\\]](https://site.example/docs/guide/a.png) ![L](https://site.example/lazy.jpg) ![S](https://site.example/docs/guide/b.jpg) :tada:',
    );
  });

  it('never lets script, style, template, svg, form controls or hidden elements into the output', () => {
    const html = `<p>Keep</p><script>var leak = "<p>script</p>";</script><style>.x{color:red}</style><noscript>Enable JS</noscript>
      <template><p>tpl</p></template><svg><text>svg</text></svg><button>Buy</button><select><option>opt</option></select>
      <textarea>typed</textarea><div hidden>hidden</div><span aria-hidden="true">icon</span><div style="display: none">none</div><p>End</p>`;
    expect(md(html)).to.equal('Keep\n\nEnd');
  });

  it('escapes text that would read as Markdown but leaves ordinary punctuation alone', () => {
    expect(md('<p>1. not a list</p><p># not a heading</p><p>- nor this</p><p>*stars* [brackets] snake_case _edge_ a<b&gt; +44 20 · 3 * 4</p>')).to.equal(
      '1\\. not a list\n\n\\# not a heading\n\n\\- nor this\n\n\\*stars\\* \\[brackets\\] snake_case \\_edge\\_ a\\<b> +44 20 · 3 \\* 4',
    );
  });

  it('turns <br> into hard line breaks and collapses whitespace', () => {
    expect(md('<p>  line one<br>\n   line   two <br><br></p>')).to.equal('line one  \nline two');
  });

  it('opens up a link that wraps blocks, keeping the link on each part', () => {
    const html = '<a href="/p/1"><img src="/p/1.jpg" alt="Shoe"><h3>Trail shoe</h3><p>£99</p></a>';
    expect(md(html)).to.equal('[![Shoe](https://site.example/p/1.jpg)](https://site.example/p/1)\n\n### [Trail shoe](https://site.example/p/1)\n\n[£99](https://site.example/p/1)');
  });

  it('renders definition lists, details and media players', () => {
    const html = '<dl><dt>Term</dt><dd>Meaning</dd></dl><details><summary>More</summary><p>Body</p></details><audio src="/a.mp3">fallback</audio><video><source src="v.mp4"></video>';
    expect(md(html)).to.equal('**Term**\n\nMeaning\n\nMore\n\nBody\n\n[Audio](https://site.example/a.mp3)\n\n[Video](https://site.example/docs/guide/v.mp4)');
  });

  it('survives nesting far deeper than any real page, keeping the text', () => {
    const depth = 20000;
    const html = `${'<div><span>'.repeat(depth)}deep <b>text</b>${'</span></div>'.repeat(depth)}`;
    expect(md(html)).to.equal('deep text');
  });

  it('leaves out a closed dialog but renders an open one', () => {
    expect(md('<dialog><p>closed</p></dialog><dialog open><p>open</p></dialog>')).to.equal('open');
  });

  it('returns an empty string for a page without content', () => {
    expect(toMarkdown('', URL)).to.equal('');
    expect(toMarkdown('<html><head><script>x()</script></head><body>  </body></html>', URL)).to.equal('');
  });

  it('converts a fragment without <html> or <body>', () => {
    expect(toMarkdown('<h2>Only</h2><p>fragment</p>', URL)).to.equal('## Only\n\nfragment');
  });
});
