/**
 * Page text built against backtracking patterns: long runs of whitespace, dots or underscores where a
 * pattern used to retry from every character of the run (seconds for 40,000 characters, growing with
 * the square of the run). Each output now reads such a page in time linear in it; the bound below is
 * hundreds of times what that takes, and a tenth of what the patterns took.
 */
import { expect } from 'chai';
import { looksGenerated } from '../../../engine/extract/signals';
import { autoparse, extractOutputs, parseCssExtractor, toMarkdown, toPlainText } from '../../../engine/outputs';
import { parseHtml, visibleText } from '../../../engine/outputs/dom';

const URL = 'https://example.test/';
const RUN = 200_000;
const spaces = ' '.repeat(RUN);

describe('outputs over long runs in page text', function () {
  this.timeout(10_000);

  it('trims a code block that ends in a long run of whitespace before its last word', () => {
    expect(toMarkdown(`<pre>first${spaces}last\n\n\n</pre>`, URL)).to.equal(`\`\`\`\nfirst${spaces}last\n\`\`\``);
    expect(toPlainText(`<pre>first${spaces}last\n\n\n</pre>`)).to.equal(`first${spaces}last`);
  });

  it('collapses the blanks of visible text made of many blank text nodes', () => {
    // 190,000 text nodes of one space each (comments make them separate nodes): one run of spaces, no line break.
    expect(visibleText(parseHtml(`<div>a${' <!---->'.repeat(190_000)}b</div>`), { lines: true })).to.equal('a b');
  });

  it('strips the closing marker of a JSON-LD block with a long run of whitespace inside', () => {
    expect(autoparse(`<script type="application/ld+json">{"@type":"Thing"${spaces}}</script>`, URL).json_ld).to.deep.equal([{ '@type': 'Thing' }]);
    expect(autoparse(`<script type="application/ld+json"><!--{"@type":"A"}${spaces}--></script>`, URL).json_ld).to.deep.equal([{ '@type': 'A' }]);
  });

  it('cleans the dots around a mailto address with a long run of dots inside', () => {
    expect(extractOutputs(`<a href="mailto:a${'.'.repeat(RUN)}b@example.com">x</a><a href="mailto:..ok@example.com.">y</a>`, URL, ['emails']).emails).to.deep.equal(['ok@example.com']);
  });

  it('tells generated class names from long runs of underscores', () => {
    expect(looksGenerated(`${'_'.repeat(RUN)}!`)).to.equal(false);
    expect(looksGenerated('card__abcde')).to.equal(true);
    expect(looksGenerated('card__abcd')).to.equal(false);
  });

  it('splits a css_extractor selector from its attribute with a long run of spaces inside', () => {
    expect(parseCssExtractor(JSON.stringify({ links: `a${spaces}b @href`, text: 'h1' }))).to.deep.equal({
      ok: true,
      rules: [
        { key: 'links', selector: `a${spaces}b`, attribute: 'href' },
        { key: 'text', selector: 'h1' },
      ],
    });
  });
});
