import { expect } from 'chai';
import { AUTOPARSE_LINK_LIMIT, autoparse } from '../../../engine/outputs';

const URL = 'https://news.example/2024/story';

describe('autoparse', () => {
  it('reads title, description, keywords, canonical URL and language', () => {
    const html = `<html lang="en-GB"><head><title> Story | News </title><meta name="description" content=" A  story. ">
      <meta name="keywords" content="a, b ,, c"><link rel="canonical" href="/2024/story?amp=0"></head><body></body></html>`;
    expect(autoparse(html, URL)).to.deep.include({
      url: URL,
      title: 'Story | News',
      description: 'A story.',
      keywords: ['a', 'b', 'c'],
      canonical: 'https://news.example/2024/story?amp=0',
      language: 'en-GB',
    });
  });

  it('falls back to OpenGraph for title, description and language, and uses null when nothing is there', () => {
    const html = '<head><meta property="og:title" content="OG title"><meta property="og:description" content="OG desc"><meta property="og:locale" content="fr_FR"></head>';
    expect(autoparse(html, URL)).to.deep.include({ title: 'OG title', description: 'OG desc', language: 'fr_FR', canonical: null });
    expect(autoparse('<p>bare</p>', URL)).to.deep.include({ title: null, description: null, canonical: null, language: null, keywords: [] });
  });

  it('parses JSON-LD blocks, unwrapping comments and arrays, skipping invalid ones', () => {
    const html = `<script type="application/ld+json">{"@type":"NewsArticle","headline":"H"}</script>
      <script type="application/ld+json; charset=utf-8"><!-- [{"@type":"A"},{"@type":"B"}] --></script>
      <script type="application/ld+json">{"@type":"Broken",}</script><script type="application/json">{"not":"ld"}</script>`;
    expect(autoparse(html, URL).json_ld).to.deep.equal([{ '@type': 'NewsArticle', headline: 'H' }, { '@type': 'A' }, { '@type': 'B' }]);
  });

  it('reads microdata items with nested items, URL properties, content attributes and itemref', () => {
    const html = `<div itemscope itemtype="https://schema.org/Product" itemref="extra">
        <h1 itemprop="name">Shoe</h1><img itemprop="image" src="/s.jpg"><a itemprop="url" href="/p/1">link</a>
        <div itemprop="offers" itemscope itemtype="https://schema.org/Offer"><meta itemprop="priceCurrency" content="GBP">
          <span itemprop="price" content="99.00">£99</span><time itemprop="validFrom" datetime="2024-06-01">June</time></div>
        <span itemprop="tag">a</span><span itemprop="tag keyword">b</span></div>
      <p id="extra" itemprop="brand">Ardent</p>`;
    expect(autoparse(html, URL).microdata).to.deep.equal([
      {
        type: ['https://schema.org/Product'],
        properties: {
          name: ['Shoe'],
          image: ['https://news.example/s.jpg'],
          url: ['https://news.example/p/1'],
          offers: [{ type: ['https://schema.org/Offer'], properties: { priceCurrency: ['GBP'], price: ['99.00'], validFrom: ['2024-06-01'] } }],
          tag: ['a', 'b'],
          keyword: ['b'],
          brand: ['Ardent'],
        },
      },
    ]);
  });

  it('groups OpenGraph (with article: keys) and Twitter card values, repeated keys as arrays', () => {
    const html = `<meta property="og:title" content="T"><meta property="og:image" content="/1.jpg"><meta property="og:image" content="/2.jpg">
      <meta property="article:tag" content="x"><meta name="twitter:card" content="summary"><meta property="twitter:site" content="@n">`;
    const result = autoparse(html, URL);
    expect({ ...result.open_graph }).to.deep.equal({ title: 'T', image: ['/1.jpg', '/2.jpg'], 'article:tag': 'x' });
    expect({ ...result.twitter }).to.deep.equal({ card: 'summary', site: '@n' });
  });

  it('lists headings and links with their text, deduplicated and capped', () => {
    const links = Array.from({ length: AUTOPARSE_LINK_LIMIT + 20 }, (_v, i) => `<a href="/l/${i}">L${i}</a>`).join('');
    const html = `<body><h1>Top</h1><h2>Sub</h2><a href="/l/0">again</a><a href="mailto:x@y.example">mail</a><a href="/icon" aria-label="Icon"><svg></svg></a>${links}</body>`;
    const result = autoparse(html, URL);
    expect(result.headings).to.deep.equal({ h1: ['Top'], h2: ['Sub'], h3: [], h4: [], h5: [], h6: [] });
    expect(result.links).to.have.length(AUTOPARSE_LINK_LIMIT);
    expect(result.links.slice(0, 3)).to.deep.equal([
      { text: 'again', url: 'https://news.example/l/0' },
      { text: 'Icon', url: 'https://news.example/icon' },
      { text: 'L1', url: 'https://news.example/l/1' },
    ]);
  });
});
