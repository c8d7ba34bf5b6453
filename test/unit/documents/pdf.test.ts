/**
 * PDFs written by the test PDF writer (test/fixtures/documents/pdf-writer.ts), converted in this
 * thread: what text and structure must come out of headings, paragraphs, hyphenation, lists, ruled
 * tables, links, two columns, long documents, scanned pages and the Info dictionary.
 */
import { expect } from 'chai';
import { convertInProcess } from '../../../engine/documents/convert';
import type { DocumentResult } from '../../../engine/documents/types';
import { flow, writePdf, type FlowBlock, type PdfPage, type PdfOptions } from '../../fixtures/documents/pdf-writer';

async function markdown(pages: PdfPage[], options: PdfOptions = {}, pageMarkers = false): Promise<DocumentResult> {
  const result = await convertInProcess(writePdf(pages, options), { contentType: 'application/pdf', pageMarkers });
  if (!result.ok) throw new Error(`conversion failed: ${result.code} ${result.reason}`);
  return result;
}

describe('PDF documents', () => {
  it('keeps headings by size and weight, joins lines into paragraphs and hyphenated words into one', async () => {
    const { text } = await markdown([
      {
        texts: [
          { x: 72, y: 720, size: 24, text: 'Quarterly Operations Review', bold: true },
          { x: 72, y: 690, size: 16, text: 'Regional results', bold: true },
          { x: 72, y: 668, size: 11, text: 'Revenue across the northern region grew steadily while the main-' },
          { x: 72, y: 654, size: 11, text: 'tenance budget stayed flat for the third consecutive quarter and' },
          { x: 72, y: 640, size: 11, text: 'staffing followed the plan.' },
          { x: 72, y: 612, size: 11, text: 'Outlook', bold: true },
          { x: 72, y: 594, size: 11, text: 'The second paragraph starts after a gap.' },
        ],
      },
    ]);
    expect(text).to.include('# Quarterly Operations Review\n');
    expect(text).to.include('## Regional results\n');
    expect(text).to.include('Revenue across the northern region grew steadily while the maintenance budget stayed flat for the third consecutive quarter and staffing followed the plan.');
    expect(text).to.match(/^#{3} Outlook$/m);
    expect(text).to.include('\n\nThe second paragraph starts after a gap.');
  });

  it('keeps bullets with their nesting and numbered items as an ordered list', async () => {
    const blocks: FlowBlock[] = [
      { kind: 'paragraph', text: 'The plan has three parts.' },
      { kind: 'item', text: 'Hire two engineers', level: 0 },
      { kind: 'item', text: 'One for the platform team', level: 1 },
      { kind: 'item', text: 'One for the data team', level: 1 },
      { kind: 'item', text: 'Open the southern warehouse', level: 0 },
    ];
    const { text } = await markdown(flow(blocks));
    expect(text).to.include('- Hire two engineers\n  - One for the platform team\n  - One for the data team\n- Open the southern warehouse');
    const numbered = await markdown([
      {
        texts: [
          { x: 72, y: 700, size: 11, text: '1. Collect the figures' },
          { x: 72, y: 686, size: 11, text: '2. Check them twice' },
        ],
      },
    ]);
    expect(numbered.text).to.include('1. Collect the figures\n2. Check them twice');
  });

  it('reads a table from its ruling lines, and a link from its annotation', async () => {
    const rows = [
      ['Region', 'Orders', 'Growth'],
      ['North', '1200', '4.5%'],
      ['South', '830', '2.1%'],
    ];
    const texts = rows.flatMap((row, r) => row.map((cell, c) => ({ x: 80 + c * 120, y: 700 - r * 20, size: 10, text: cell, bold: r === 0 })));
    const rects = [
      ...[0, 1, 2, 3].map((r) => ({ x: 72, y: 715 - r * 20, w: 360, h: 0.8 })),
      ...[0, 1, 2, 3].map((c) => ({ x: 72 + c * 120, y: 655, w: 0.8, h: 60 })),
    ];
    texts.push({ x: 72, y: 620, size: 11, text: 'Read the full report online.', bold: false });
    const { text } = await markdown([{ texts, rects, links: [{ x: 110, y: 617, w: 70, h: 13, url: 'https://example.com/report' }] }]);
    expect(text).to.include('| Region | Orders | Growth |\n| --- | --- | --- |\n| North | 1200 | 4.5% |\n| South | 830 | 2.1% |');
    expect(text).to.match(/Read the \[full report\]\(https:\/\/example\.com\/report\) ?online\./);
  });

  it('reads two columns one after the other, not across', async () => {
    const left = Array.from({ length: 30 }, (_, i) => `left column sentence number ${i} keeps going on.`).join(' ');
    const right = Array.from({ length: 30 }, (_, i) => `right column sentence number ${i} keeps going on.`).join(' ');
    const pages = flow(
      [
        { kind: 'paragraph', text: left },
        { kind: 'paragraph', text: right },
      ],
      2,
    );
    const { text } = await markdown(pages);
    const plain = text.replace(/\s+/g, ' ');
    expect(plain).to.include(left);
    expect(plain).to.include(right);
    expect(plain.indexOf(left)).to.be.lessThan(plain.indexOf(right));
  });

  it('marks page boundaries unless asked not to, joins a paragraph across pages, and drops running page numbers', async () => {
    const subjects = ['warehouse', 'budget', 'schedule', 'contract', 'audit', 'forecast', 'network'];
    const sentence = (i: number) => `Sentence ${i} of a long document describes the ${subjects[i % 7]} in detail.`;
    const blocks: FlowBlock[] = [];
    for (let p = 0; p < 60; p++) blocks.push({ kind: 'paragraph', text: Array.from({ length: 12 }, (_, i) => sentence(p * 12 + i)).join(' ') });
    const pages = flow(blocks);
    pages.forEach((page, i) => page.texts.push({ x: 300, y: 30, size: 9, text: `Page ${i + 1} of ${pages.length}` }));
    const marked = await markdown(pages, {}, true);
    expect(marked.document.pages).to.equal(pages.length);
    expect(pages.length).to.be.greaterThan(10);
    for (let n = 1; n <= pages.length; n++) expect(marked.text).to.include(`<!-- page ${n} -->`);
    expect(marked.text).not.to.match(/Page \d+ of \d+/);
    const plain = (await markdown(pages)).text;
    expect(plain).not.to.include('<!-- page');
    // Each paragraph comes back whole, wherever a page break cut it.
    for (const block of blocks) expect(plain).to.include(block.text);
    for (let i = 0; i < 60 * 12; i++) expect(plain).to.include(sentence(i));
  });

  it('keeps a list item whole when a page break cuts it, hyphenated or not, and the list going on after it', async () => {
    const bullet = (y: number, text: string) => [
      { x: 60, y, size: 11, text: '•' },
      { x: 72, y, size: 11, text },
    ];
    const pages: PdfPage[] = [
      { texts: [{ x: 72, y: 740, size: 11, text: 'The list begins on this page and is cut by its end.' }, ...bullet(720, 'First item of the list'), ...bullet(706, 'Second item goes on across the page and characteri-')] },
      { texts: [{ x: 72, y: 740, size: 11, text: 'stics of it end here' }, ...bullet(726, 'Third item after the break'), ...bullet(712, 'Fourth item cut without a hyphen goes')] },
      { texts: [{ x: 72, y: 740, size: 11, text: 'on and ends on the last page' }, { x: 72, y: 700, size: 11, text: 'A closing paragraph.' }] },
    ];
    const { text } = await markdown(pages);
    expect(text).to.contain('- Second item goes on across the page and characteristics of it end here\n- Third item after the break\n- Fourth item cut without a hyphen goes on and ends on the last page');
    expect(text).to.contain('A closing paragraph.');
  });

  it('reports pages without a text layer, and the metadata the file states', async () => {
    const result = await markdown(
      [{ texts: [{ x: 72, y: 700, size: 11, text: 'A page with text.' }] }, { texts: [], scanned: true }, { texts: [{ x: 72, y: 700, size: 11, text: 'Text again.' }] }],
      { title: 'Scanned Letters', author: 'Records Office', created: 'D:20240115093000Z', outline: [{ title: 'A page with text', page: 1 }] },
    );
    expect(result.document).to.deep.equal({
      format: 'pdf',
      pages: 3,
      title: 'Scanned Letters',
      author: 'Records Office',
      created: '2024-01-15T09:30:00.000Z',
      modified: null,
      pagesWithoutText: [2],
    });
    // The outline makes a heading of a line styled like the body.
    expect(result.text).to.match(/^# A page with text\.$/m);
  });
});
