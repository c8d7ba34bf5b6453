/**
 * The output conversions on the large sample pages (test/fixtures/pages): the Markdown passes the
 * whole fidelity checklist, and no conversion lets script, style or hidden text through.
 */
import { expect } from 'chai';
import { autoparse, extractOutputs, toMarkdown, toPlainText } from '../../../engine/outputs';
import { CHECKLIST, codeBlocks } from '../../fixtures/pages/checklist';
import { SAMPLE_PAGES, samplePage } from '../../fixtures/pages';

/** Strings that only occur inside each page's scripts, styles, templates or hidden elements. */
const NOISE: Record<string, string[]> = {
  'news-article': ['dataLayer', 'heraldAds', 'IntersectionObserver', '--brand', 'We use cookies', 'comment__reply', 'Enable JavaScript'],
  'docs-page': ['docusaurus-theme', 'prism-background-color', '__DOCUSAURUS', 'theme-svg-external-link'],
  'shop-listing': ['gtm.start', 'plp-grid', 'addEventListener', '"pageSize"', 'Price: low to high'],
  'forum-thread': ['LanternPreload', 'LanternTrack', 'post_actions', 'not a real script'],
  'wiki-article': ['RLCONF', 'wgPageName', 'mw.loader', 'limitreport', 'River in northern England'],
};

describe('output conversions on the sample pages', () => {
  for (const page of SAMPLE_PAGES) {
    describe(page.name, () => {
      const markdown = toMarkdown(page.html, page.url);

      for (const check of CHECKLIST.filter((c) => c.page === page.name)) {
        it(`markdown: ${check.category}: ${check.name}`, () => {
          expect(check.test(markdown), `failed on:\n${markdown}`).to.equal(true);
        });
      }

      it('plain text and markdown never contain script, style or hidden text', () => {
        const text = toPlainText(page.html);
        for (const noise of NOISE[page.name] ?? []) {
          expect(markdown, noise).not.to.contain(noise);
          expect(text, noise).not.to.contain(noise);
        }
        expect(text).not.to.match(/<\/?(?:div|span|script|style)\b/);
      });

      it('extracts all twelve outputs as JSON', () => {
        const outputs = extractOutputs(page.html, page.url, ['*']);
        expect(JSON.parse(JSON.stringify(outputs))).to.have.all.keys(
          'emails', 'phone_numbers', 'headings', 'images', 'audios', 'videos', 'links', 'tables', 'menus', 'hashtags', 'metadata', 'favicon',
        );
        for (const url of [...(outputs.images ?? []), ...(outputs.links ?? [])]) expect(url).to.match(/^https?:\/\//);
      });
    });
  }

  it('keeps code blocks of the docs page byte for byte', () => {
    const { html, url } = samplePage('docs-page');
    const python = codeBlocks(toMarkdown(html, url)).find((block) => block.lang === 'python');
    expect(python?.code).to.equal(
      'from riverflow import Stream\n\nasync def main():\n    s = Stream.from_iter(range(10), high_water_mark=4)\n    async for x in s.map(lambda v: v * 2):\n        print(x)',
    );
  });

  it('finds the contacts of the news and shop pages', () => {
    const news = samplePage('news-article');
    expect(extractOutputs(news.html, news.url, ['emails', 'phone_numbers'])).to.deep.equal({
      emails: ['wend.barrier@northshore.gov.example', 'newsroom@northshore-herald.example', 'tips@northshore-herald.example'],
      phone_numbers: ['+442079460321', '020 7946 0000'],
    });
    const shop = samplePage('shop-listing');
    expect(extractOutputs(shop.html, shop.url, ['phone_numbers']).phone_numbers).to.deep.equal([
      '+441614960123', '+44-161-496-0999', '(0161) 496 0456', '017687 12345',
    ]);
  });

  it('finds the hashtags of the forum thread but not colours or #include', () => {
    const forum = samplePage('forum-thread');
    expect(extractOutputs(forum.html, forum.url, ['hashtags']).hashtags).to.deep.equal(['#nodejs', '#memoryleak', '#solved', '#heapdump']);
  });

  it('reads the shop listing tables, menus and media', () => {
    const shop = samplePage('shop-listing');
    const outputs = extractOutputs(shop.html, shop.url, ['tables', 'menus', 'images', 'favicon']);
    expect(outputs.tables?.[0]?.headings).to.deep.equal(['Shoe size UK', 'Shoe size EU', "Shoe size US men's", 'Foot length (cm)']);
    expect(outputs.tables?.[0]?.rows[0]).to.deep.equal({ 'Shoe size UK': '7', 'Shoe size EU': '41', "Shoe size US men's": '8', 'Foot length (cm)': '25.4' });
    expect(outputs.menus?.[0]?.items[0]?.items?.map((item) => item.text)).to.deep.equal(['Walking boots', 'Trail running shoes', 'Approach shoes', 'Sandals']);
    expect(outputs.images).to.include('https://images.ridgeline.example/p/RDG-40112/main-480.jpg');
    expect(outputs.images?.some((src) => src.startsWith('data:'))).to.equal(false);
    expect(outputs.favicon).to.equal('https://shop.ridgeline.example/favicon.ico');
  });

  it('autoparses the structured data of the sample pages', () => {
    const news = samplePage('news-article');
    const article = autoparse(news.html, news.url);
    expect(article.json_ld.map((item) => (item as { '@type': string })['@type'])).to.deep.equal(['NewsArticle', 'BreadcrumbList']);
    expect(article).to.deep.include({ language: 'en-GB', canonical: 'https://www.northshore-herald.example/news/local/2024/06/12/council-approves-tidal-barrier' });
    expect(article.open_graph.image).to.have.length(2);
    expect(article.twitter.site).to.equal('@NorthshoreHerald');

    const shop = samplePage('shop-listing');
    const products = autoparse(shop.html, shop.url).microdata;
    expect(products).to.have.length(8);
    expect(products[0]?.properties.name).to.deep.equal(["Ridge 4 Men's Trail Running Shoes"]);
    expect(products[0]?.properties.offers?.[0]).to.deep.include({ properties: { priceCurrency: ['GBP'], availability: ['https://schema.org/InStock'], price: ['135.00'] } });
  });
});
