/**
 * The pre-scan that bounds every parse (engine/outputs/scan): it counts what node-html-parser will do
 * (checked against the parser itself, on the sample pages and on random markup), refuses a page past a
 * cap before the parser builds anything, and hands the parser a page it reads in linear time.
 */
import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { HTMLElement, parse } from 'node-html-parser';
import { isHtmlRefused } from '../../../engine/outputs/limits';
import { parseHtml } from '../../../engine/outputs/dom';
import { scanHtml, type ParseCaps } from '../../../engine/outputs/scan';
import { toMarkdown, toPlainText } from '../../../engine/outputs';
import { SAMPLE_PAGES } from '../../fixtures/pages';

const UNCAPPED: ParseCaps = { maxChars: Number.MAX_SAFE_INTEGER, maxNodes: Number.MAX_SAFE_INTEGER, maxDepth: Number.MAX_SAFE_INTEGER };
const PARSE_OPTIONS = { lowerCaseTagName: false, comment: false, blockTextElements: { script: true, style: true, noscript: true, textarea: true } };

/**
 * What the parser does with a page, counted from the parser itself: every node it appends (made, or
 * moved when it lifts the content of an element left open), every child a removal passes over, and
 * the deepest element it makes.
 */
function parserWork(html: string): { nodes: number; depth: number } {
  const proto = HTMLElement.prototype as unknown as { appendChild(node: unknown): unknown; removeChild(node: unknown): unknown };
  const { appendChild, removeChild } = proto;
  let nodes = 0;
  let depth = 0;
  proto.appendChild = function (this: HTMLElement, node: unknown) {
    nodes++;
    if ((node as HTMLElement).nodeType === 1) {
      let level = 1;
      for (let parent = this.parentNode; parent; parent = parent.parentNode) level++;
      depth = Math.max(depth, level);
    }
    return appendChild.call(this, node);
  };
  proto.removeChild = function (this: HTMLElement, node: unknown) {
    nodes += this.childNodes.length;
    return removeChild.call(this, node);
  };
  try {
    parse(html, PARSE_OPTIONS);
  } finally {
    proto.appendChild = appendChild;
    proto.removeChild = removeChild;
  }
  return { nodes, depth };
}

function expectSameWork(html: string): void {
  const scan = scanHtml(html, UNCAPPED);
  if (!scan.ok) throw new Error('refused without caps');
  expect({ nodes: scan.nodes, depth: scan.depth }, JSON.stringify(html.slice(0, 200))).to.deep.equal(parserWork(scan.html));
}

/** Deterministic pseudo-random numbers (xorshift), so a failure names a reproducible page. */
function random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 4294967296;
  };
}

const ATOMS = [
  '<', '>', '/', '"', "'", '=', ' ', '\n', '\t', '\u00a0', '\ufeff', 'a', 'b', 'p', 'i', 'li', 'ul', 'ol', 'dl', 'dt', 'dd', 'td', 'th', 'tr',
  'tbody', 'thead', 'table', 'div', 'DIV', 'P', 'h1', 'br', 'img', 'script', 'SCRIPT', 'style', 'textarea', 'noscript', '</script>', '</script >',
  '</style>', '<!--', '-->', '<![CDATA[', ']]>', 'href=/x/', '<b>', '</b>', '<p>', '</div>', '<div>', '</a>', '<a href="x">', 'x', 'ü', '@', '[', '|', 'body', 'html',
];

describe('the pre-scan of a page', () => {
  it('counts the nodes and the depth node-html-parser makes, on the sample pages and the article benchmark pages', () => {
    for (const page of SAMPLE_PAGES) expectSameWork(page.html);
    // The benchmark pages are read where they are kept beside the repository, when they are there.
    const corpus = path.join(__dirname, '../../../../shared/data/article-extraction/html');
    if (!existsSync(corpus)) return;
    for (const file of readdirSync(corpus).slice(0, 40)) expectSameWork(gunzipSync(readFileSync(path.join(corpus, file))).toString('utf8'));
  });

  it('counts the nodes and the depth node-html-parser makes on random markup, unclosed and misnested', () => {
    const next = random(20240611);
    for (let round = 0; round < 20_000; round++) {
      let html = '';
      const atoms = 1 + Math.floor(next() * 60);
      for (let index = 0; index < atoms; index++) html += ATOMS[Math.floor(next() * ATOMS.length)];
      expectSameWork(html);
    }
  });

  it('counts the content the parser lifts out of elements left open at the end of the page', () => {
    const unclosed = '<div>x'.repeat(1_000);
    const scan = scanHtml(unclosed, UNCAPPED);
    expect(scan.ok && scan.nodes).to.be.greaterThan(100_000); // 2,000 made, the rest moved one level at a time
    expectSameWork(unclosed);
    expect(scanHtml('<div>x'.repeat(20_000), { ...UNCAPPED, maxNodes: 200_000 })).to.deep.equal({ ok: false, cap: 'nodes', limit: 200_000 });
  });

  it('refuses a page past each cap, and stops at the first cap it reaches', () => {
    const deep = `${'<div>'.repeat(900_000)}deep${'</div>'.repeat(900_000)}`;
    expect(scanHtml(deep, { maxChars: 20_000_000, maxNodes: 200_000, maxDepth: 50_000 })).to.deep.equal({ ok: false, cap: 'depth', limit: 50_000 });
    expect(scanHtml(deep, { maxChars: 20_000_000, maxNodes: 40_000, maxDepth: 50_000 })).to.deep.equal({ ok: false, cap: 'nodes', limit: 40_000 });
    expect(scanHtml(deep, { maxChars: 1_000_000, maxNodes: 200_000, maxDepth: 50_000 })).to.deep.equal({ ok: false, cap: 'size', limit: 1_000_000 });
    const wide = '<p>x</p>'.repeat(1_000);
    expect(scanHtml(wide, { ...UNCAPPED, maxNodes: 2_000 })).to.include({ ok: true, nodes: 2_000 });
    expect(scanHtml(wide, { ...UNCAPPED, maxNodes: 1_999 })).to.deep.equal({ ok: false, cap: 'nodes', limit: 1_999 });
  });

  it('makes every output refuse a page past a cap with HtmlRefused naming it', () => {
    const deep = `${'<div>'.repeat(60_000)}deep${'</div>'.repeat(60_000)}`;
    for (const output of [() => toMarkdown(deep, 'https://example.test/'), () => toPlainText(deep), () => parseHtml(deep)]) {
      let refused: unknown;
      try {
        output();
      } catch (error) {
        refused = error;
      }
      expect(isHtmlRefused(refused) && { limit: refused.limit, value: refused.value }).to.deep.equal({ limit: 'depth', value: 50_000 });
    }
  });

  it('keeps flattening nesting past 400 levels below the depth cap', () => {
    const html = `${'<section><span>'.repeat(10_000)}deep <b>text</b>${'</span></section>'.repeat(10_000)}`;
    expect(toMarkdown(html, 'https://example.test/')).to.equal('deep text');
  });

  it('reads the rest of a page after a comment that never ends as that comment, as browsers do', () => {
    const scan = scanHtml(`<p>kept</p><!-- open ${'<p>x</p>'.repeat(3)}`, UNCAPPED);
    expect(scan.ok && scan.html).to.equal('<p>kept</p>');
    const openings = `<p>kept</p>${'<!--'.repeat(50_000)}`;
    expect(toPlainText(openings)).to.equal('kept');
    const cdata = scanHtml('<p>a</p><![CDATA[ x ]]><p>b</p><![CDATA[ never', UNCAPPED);
    expect(cdata.ok && cdata.html).to.equal('<p>a</p><![CDATA[ x ]]><p>b</p>');
  });

  it('lowercases tag names and spells raw-text end tags as the parser looks for them, leaving their text as written', () => {
    const scan = scanHtml('<DIV Class="A"><SCRIPT>if (a<B) x="</DIV>"</SCRIPT ><P>Text</P></DIV>', UNCAPPED);
    expect(scan.ok && scan.html).to.equal('<div Class="A"><script>if (a<B) x="</DIV>"</script><p>Text</p></div>');
    expect(toPlainText('<DIV><SCRIPT>hidden()</SCRIPT >Shown</DIV>')).to.equal('Shown');
    const unchanged = '<div><p>nothing to change</p></div>';
    expect(scanHtml(unchanged, UNCAPPED)).to.deep.include({ html: unchanged });
  });

  it('reads pages built against the parser in linear time: unclosed scripts, comments and CDATA openings by the hundred thousand', function () {
    // Each took the parser (or the lowercasing pattern before it) tens of seconds, growing with the
    // square of the count; read in linear time they take milliseconds, far inside this bound.
    this.timeout(10_000);
    expect(toPlainText(`<P>Kept</P>${'<SCRIPT>'.repeat(200_000)}`)).to.equal('Kept');
    expect(toPlainText(`<p>Kept</p>${'<![CDATA['.repeat(100_000)}`)).to.equal('Kept');
    expect(toMarkdown(`<p>Kept</p>${'<!--'.repeat(200_000)}`, 'https://example.test/')).to.equal('Kept');
  });
});
