/**
 * PDFs printed by the stack's Chromium from seeded reports (test/fixtures/documents): what a reader
 * gets back must hold each heading as a heading, each list item as a list item and each table row as
 * a table row, in one column, in two, and over many pages. Converted through the worker pool, as the
 * surfaces will.
 */
import { expect } from 'chai';
import { createDocumentPool, type DocumentPool } from '../../engine/documents';
import { startPrinter, type Printer } from '../fixtures/documents/chromium';
import { makeSpec, truthOf, type DocSpec } from '../fixtures/documents/corpus';
import { specHtml, type HtmlOptions } from '../fixtures/documents/html';

const clean = (text: string): string => text.replace(/\\([\\`*_{}[\]()#+\-.!|>~])/g, '$1').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/\s+/g, ' ').trim();

function structure(markdown: string): { headings: Set<string>; items: Set<string>; rows: Set<string> } {
  const headings = new Set<string>();
  const items = new Set<string>();
  const rows = new Set<string>();
  for (const line of markdown.split('\n')) {
    const heading = /^#{1,6} (.*)$/.exec(line);
    if (heading) headings.add(clean(heading[1]!));
    const item = /^\s*(?:-|\d+\.) (.*)$/.exec(line);
    if (item) items.add(clean(item[1]!));
    if (/^\|.*\|$/.test(line) && !/^\|[\s|:-]+\|$/.test(line)) rows.add(line.slice(1, -1).split(' | ').map(clean).join(' | '));
  }
  return { headings, items, rows };
}

describe('PDFs printed by Chromium', function () {
  let printer: Printer;
  let pool: DocumentPool;
  before(async () => {
    printer = await startPrinter();
    pool = createDocumentPool({ workers: 1 });
  });
  after(async () => {
    await printer?.close();
    await pool?.close();
  });

  async function check(spec: DocSpec, options: HtmlOptions): Promise<{ markdown: string; pages: number | null }> {
    const pdf = await printer.print(specHtml(spec, options), { outline: true });
    const result = await pool.convert(pdf, { contentType: 'application/pdf' });
    if (!result.ok) throw new Error(`conversion failed: ${result.code} ${result.reason}`);
    const truth = truthOf(spec);
    const found = structure(result.text);
    for (const heading of truth.headings) expect(found.headings, `heading "${heading}"`).to.include(clean(heading));
    for (const item of truth.items) expect(found.items, `list item "${item}"`).to.include(clean(item));
    for (const row of truth.rows) expect(found.rows, `table row ${row.join(' | ')}`).to.include(row.map(clean).join(' | '));
    return { markdown: result.text, pages: result.document.pages };
  }

  it('keeps headings, nested lists and tables with and without borders', async () => {
    await check(makeSpec(21), { bordered: true });
    const { markdown } = await check(makeSpec(22), { bordered: false, sans: true, boldHeadings: true });
    expect(markdown).to.match(/^ {2,}- /m);
  });

  it('reads a two-column report column by column', async () => {
    const spec = makeSpec(23);
    const { markdown } = await check(spec, { columns: 2 });
    const flat = clean(markdown);
    const paragraphs = spec.sections.flatMap((section) => section.blocks.flatMap((block) => (block.kind === 'paragraph' ? [block.parts.map((part) => part.text).join('')] : [])));
    let at = 0;
    for (const paragraph of paragraphs) {
      const found = flat.indexOf(paragraph, at);
      expect(found, paragraph.slice(0, 60)).to.be.greaterThan(-1);
      at = found;
    }
  });

  it('converts a long report with a page marker per page', async () => {
    const { markdown, pages } = await check(makeSpec(24, { sections: 60 }), { bordered: true });
    expect(pages).to.be.greaterThan(25);
    for (let n = 1; n <= pages!; n++) expect(markdown).to.include(`<!-- page ${n} -->`);
  });
});
