import { expect } from 'chai';
import { OUTPUT_KINDS, extractOutputs, parseOutputKinds } from '../../../engine/outputs';

const URL = 'https://site.example/about/team';
const page = (head: string, body: string): string => `<html><head>${head}</head><body>${body}</body></html>`;
const one = <K extends (typeof OUTPUT_KINDS)[number]>(kind: K, html: string, url = URL) => extractOutputs(html, url, [kind])[kind];

describe('parseOutputKinds', () => {
  it('accepts the twelve kinds, case-insensitively and in any order, returning them in catalogue order', () => {
    expect(parseOutputKinds(' Links,emails , links')).to.deep.equal({ ok: true, kinds: ['emails', 'links'] });
    expect(OUTPUT_KINDS).to.have.length(12);
  });

  it('expands * to every kind', () => {
    expect(parseOutputKinds('*')).to.deep.equal({ ok: true, kinds: [...OUTPUT_KINDS] });
  });

  it('names the first unknown value for a REQS004', () => {
    const result = parseOutputKinds('emails,phones,links');
    expect(result).to.include({ ok: false, code: 'REQS004', invalid: 'phones' });
    expect(!result.ok && result.detail).to.match(/unknown value "phones".*phone_numbers/);
    expect(parseOutputKinds('emails,')).to.include({ ok: false, invalid: '' });
  });
});

describe('extractOutputs', () => {
  it('returns only the kinds asked for, and all twelve for *', () => {
    expect(Object.keys(extractOutputs(page('', ''), URL, ['links', 'emails']))).to.deep.equal(['emails', 'links']);
    expect(Object.keys(extractOutputs(page('', ''), URL, ['*']))).to.deep.equal([...OUTPUT_KINDS]);
  });

  it('finds emails in mailto: links and text, deduplicated, ignoring code and image names', () => {
    const html = page('', `<a href="mailto:Team@Site.example?subject=Hi">write</a> <a href="mailto:a%40b.example,c@d.example">two</a>
      <p>Mail team@site.example or sales@site.example.</p><img src="logo@2x.png"><p>icon@2x.png</p><pre>x@code.example</pre>`);
    expect(one('emails', html)).to.deep.equal(['team@site.example', 'a@b.example', 'c@d.example', 'sales@site.example']);
  });

  it('finds phone numbers in tel: links and text, without dates, IP addresses or reference numbers', () => {
    const html = page('', `<a href="tel:+44-20-7946-0321">call</a><p>Call +44 20 7946 0321 or 020 7946 0000.</p>
      <p>US: (555) 123-4567, 555.123.4567. Keswick 017687 12345.</p>
      <p>Not phones: 2024-06-01, 192.168.10.254, VAT GB 123 4567 89, No. 08123456, 14 022 items, 1999-2004, £1 299.00</p>`);
    expect(one('phone_numbers', html)).to.deep.equal(['+44-20-7946-0321', '020 7946 0000', '(555) 123-4567', '017687 12345']);
  });

  it('lists headings by level', () => {
    expect(one('headings', page('', '<h1>A</h1><h2>B <small>x</small></h2><h2></h2><h6>F</h6>'))).to.deep.equal({
      h1: ['A'], h2: ['B x'], h3: [], h4: [], h5: [], h6: ['F'],
    });
  });

  it('lists absolute image, audio and video URLs', () => {
    const html = page('', `<img src="/a.png"><img data-src="/lazy.jpg" src="data:image/gif;base64,AA"><img src="/a.png"><img src="/px.gif" width="1" height="1">
      <picture><source srcset="/s-480.webp 480w, /s-960.webp 960w"><img src="s.jpg"></picture>
      <audio src="/pod.mp3"></audio><audio><source src="/pod.ogg"></audio><a href="/files/talk.m4a?dl=1">talk</a>
      <video src="/v.mp4"></video><a href="clip.webm">clip</a><iframe src="https://www.youtube.example/embed/x1"></iframe><iframe src="https://maps.example/embed"></iframe>`);
    const outputs = extractOutputs(html, URL, ['images', 'audios', 'videos']);
    expect(outputs.images).to.deep.equal(['https://site.example/a.png', 'https://site.example/lazy.jpg', 'https://site.example/s-960.webp', 'https://site.example/about/s.jpg']);
    expect(outputs.audios).to.deep.equal(['https://site.example/pod.mp3', 'https://site.example/pod.ogg', 'https://site.example/files/talk.m4a?dl=1']);
    expect(outputs.videos).to.deep.equal(['https://site.example/v.mp4', 'https://site.example/about/clip.webm', 'https://www.youtube.example/embed/x1']);
  });

  it('lists web links, absolute, without fragments or links back to the page', () => {
    const html = page('', '<a href="/x#part">x</a><a href="/x">x again</a><a href="#top">top</a><a href="mailto:a@b.example">m</a><a href="javascript:go()">j</a><a href="https://o.example/">o</a><map><area href="/area"></map>');
    expect(one('links', html)).to.deep.equal(['https://site.example/x', 'https://o.example/', 'https://site.example/area']);
  });

  it('reads tables as row objects under headings, or as arrays without a header', () => {
    const html = page('', `<table><caption>Votes</caption><thead><tr><th>Group</th><th>For</th><th></th><th>For</th></tr></thead>
      <tbody><tr><td>A</td><td>1</td><td>x</td><td>2</td></tr></tbody></table>
      <table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>
      <table><tr><th colspan="2">Infobox title</th></tr><tr><th>Length</th><td>61 km</td></tr></table>
      <table role="presentation"><tr><td>layout</td><td>only</td></tr></table><table><tr><td>one column</td></tr></table>`);
    expect(one('tables', html)).to.deep.equal([
      { caption: 'Votes', dimensions: { rows: 1, columns: 4 }, headings: ['Group', 'For', '', 'For'], rows: [{ Group: 'A', For: '1', column_3: 'x', 'For (2)': '2' }] },
      { dimensions: { rows: 2, columns: 2 }, headings: [], rows: [['a', 'b'], ['c', '']] },
      { caption: 'Infobox title', dimensions: { rows: 1, columns: 2 }, headings: [], rows: [['Length', '61 km']] },
    ]);
  });

  it('reads menus from nav, menu and ARIA navigation, nested as on the page', () => {
    const html = page('', `<nav aria-label="Main"><a href="/">Home</a><ul><li><a href="/news">News</a><ul><li><a href="local">Local</a></li></ul></li>
      <li>Plain</li><li><a href="/x"><svg></svg></a></li></ul><nav><a href="/inner">Inner</a></nav></nav>
      <div role="navigation"><h2>Footer</h2><a href="/terms">Terms</a></div><nav></nav>`);
    expect(one('menus', html)).to.deep.equal([
      {
        label: 'Main',
        items: [
          { text: 'Home', url: 'https://site.example/' },
          { text: 'News', url: 'https://site.example/news', items: [{ text: 'Local', url: 'https://site.example/about/local' }] },
          { text: 'Plain' },
          { text: 'Inner', url: 'https://site.example/inner' },
        ],
      },
      { label: 'Footer', items: [{ text: 'Terms', url: 'https://site.example/terms' }] },
    ]);
  });

  it('finds hashtags in text, not colours, numbers, entities or code', () => {
    const html = page('', '<p>#NodeJS rocks #nodejs #100DaysOfCode #1 #fff #ff6600 #cafe a#b &amp;#39; <a href="/t">#linked</a></p><pre>#include &lt;x&gt;</pre><code>#x</code>');
    expect(one('hashtags', html)).to.deep.equal(['#NodeJS', '#100DaysOfCode', '#cafe', '#linked']);
  });

  it('collects <meta> values by key, repeated keys as arrays, with the title', () => {
    const head = `<meta charset="utf-8"><title> Team </title><meta name="Description" content="About  us"><meta property="og:image" content="/a.png">
      <meta property="og:image" content="/b.png"><meta http-equiv="refresh" content="30"><meta name="__proto__" content="x"><meta itemprop="price" content="1">`;
    const metadata = one('metadata', page(head, ''));
    // Parsed from JSON so "__proto__" is an own key on both sides, as it is on the wire.
    expect(JSON.parse(JSON.stringify(metadata))).to.deep.equal(
      JSON.parse('{"title":"Team","charset":"utf-8","description":"About us","og:image":["/a.png","/b.png"],"refresh":"30","__proto__":"x"}'),
    );
  });

  it('finds the favicon: a declared icon, else an Apple touch icon, else /favicon.ico', () => {
    expect(one('favicon', page('<link rel="apple-touch-icon" href="/t.png"><link rel="shortcut icon" href="f.ico">', ''))).to.equal('https://site.example/about/f.ico');
    expect(one('favicon', page('<link rel="apple-touch-icon" href="/t.png">', ''))).to.equal('https://site.example/t.png');
    expect(one('favicon', page('', ''))).to.equal('https://site.example/favicon.ico');
  });
});
