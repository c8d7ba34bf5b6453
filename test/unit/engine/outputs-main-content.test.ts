import { expect } from 'chai';
import { findMainContent, mainContentMarkdown, mainContentText, renderMainContent, toMarkdown } from '../../../engine/outputs';
import { MAIN_CONTENT_CASES, markdownStructure } from '../../fixtures/main-content';

describe('main content', () => {
  for (const page of MAIN_CONTENT_CASES) {
    describe(page.name, () => {
      const markdown = mainContentMarkdown(page.html, page.url);
      const text = mainContentText(page.html, page.url);

      it(page.article ? 'finds an article' : 'finds no article and keeps the whole page', () => {
        expect(findMainContent(page.html, page.url).found).to.equal(page.article);
        if (!page.article) expect(markdown).to.equal(toMarkdown(page.html, page.url));
      });

      it('keeps the text of the article, in the Markdown and in the plain text', () => {
        for (const wanted of page.must) expect(markdown, wanted).to.contain(wanted);
        for (const wanted of page.must.filter((line) => !/^#|[|`[\]]|https?:/.test(line))) expect(text, wanted).to.contain(wanted);
      });

      it('drops the boilerplate around it', () => {
        for (const unwanted of page.mustNot) {
          expect(markdown, unwanted).to.not.contain(unwanted);
          expect(text, unwanted).to.not.contain(unwanted);
        }
      });

      it('keeps the headings, list items, tables and code blocks of the article', () => {
        expect(markdownStructure(markdown)).to.deep.equal(page.structure);
      });

      it('reads the title, byline and date the page states', () => {
        expect(findMainContent(page.html, page.url).metadata).to.deep.equal(page.metadata);
      });
    });
  }

  it('puts the metadata first as front matter when asked, and as a <head> for HTML', () => {
    const page = MAIN_CONTENT_CASES.find((c) => c.name === 'news-article');
    if (!page) throw new Error('no news-article case');
    const markdown = mainContentMarkdown(page.html, page.url, { metadata: true });
    expect(markdown.startsWith('---\ntitle: "Harbour bridge reopens after two-year repair"\nbyline: "Maren Holt"\ndate: "2026-03-14T08:30:00Z"\n---\n\n')).to.equal(true);
    const text = mainContentText(page.html, page.url, { metadata: true });
    expect(text).to.match(/^---\ntitle: .+\n---\n\n[^-]/s);
    expect(text).to.contain('The harbour bridge reopened');
    const html = renderMainContent(findMainContent(page.html, page.url), 'html', { metadata: true });
    expect(html).to.contain('<title>Harbour bridge reopens after two-year repair</title>');
    expect(html).to.contain('<meta name="author" content="Maren Holt">');
    expect(html).to.contain('<article>');
    expect(html).to.not.contain('We use cookies');
    const blog = MAIN_CONTENT_CASES.find((c) => c.name === 'docs-page');
    // Only what the page states: a page without byline or date has no such lines.
    expect(mainContentMarkdown(blog?.html ?? '', blog?.url ?? '', { metadata: true })).to.match(/^---\ntitle: "Configuring retries"\n---\n/);
  });

  it('returns the same output for the same page, and nothing for an empty one', () => {
    for (const page of MAIN_CONTENT_CASES) expect(mainContentMarkdown(page.html, page.url)).to.equal(mainContentMarkdown(page.html, page.url));
    expect(mainContentMarkdown('', 'https://example.test/')).to.equal('');
    expect(mainContentText('<html><body></body></html>', 'https://example.test/')).to.equal('');
  });

  it('takes a short story over a longer rail of teasers even when it has no headline to be found by', () => {
    const page = MAIN_CONTENT_CASES.find((c) => c.name === 'short-brief');
    if (!page) throw new Error('no short-brief case');
    const untitled = page.html.replace(/<meta property="og:title"[^>]*>/, '').replace(/<title>[^<]*<\/title>/, '<title>Northfield Gazette</title>').replace(/<h1>[^<]*<\/h1>/, '');
    expect(findMainContent(untitled, page.url).metadata.title).to.equal('Northfield Gazette');
    const text = mainContentText(untitled, page.url);
    expect(text).to.contain('The central library will stay open until eight');
    expect(text).to.not.contain('The operator says new buses');
  });

  it('prefers the block the page marks as its article body', () => {
    const filler = (label: string): string => `<p>${label} paragraph with enough words, commas, and length to score as prose in any block of the page.</p>`.repeat(4);
    const html = `<body><div class="a">${filler('Unmarked')}${filler('More unmarked')}</div><div itemprop="articleBody">${filler('Marked')}</div></body>`;
    const text = mainContentText(html, 'https://example.test/');
    expect(text).to.contain('Marked paragraph');
    expect(text).to.not.contain('Unmarked paragraph');
  });

  it('survives hostile nesting without exhausting the stack', () => {
    const html = `${'<div>'.repeat(5000)}<p>Deep text, deep in the page, with enough words to be a paragraph.</p>${'</div>'.repeat(5000)}`;
    expect(mainContentText(html, 'https://example.test/')).to.contain('Deep text');
  });
});
