/**
 * DOCX, PPTX and XLSX made by the generators of test/fixtures/documents (the docx, pptxgenjs and
 * exceljs writers), and ODT/ODS/CSV made here: the text, the structure and the metadata each must keep.
 */
import { expect } from 'chai';
import { convertInProcess } from '../../../engine/documents/convert';
import type { ConvertOptions, DocumentResult } from '../../../engine/documents/types';
import { repack } from '../../../engine/documents/zip';
import type { DocSpec } from '../../fixtures/documents/corpus';
import { specDocx } from '../../fixtures/documents/docx';
import { specPptx } from '../../fixtures/documents/pptx';
import { specXlsx } from '../../fixtures/documents/xlsx';

const SPEC: DocSpec = {
  title: 'Field Operations Report',
  author: 'Harbor Author',
  sections: [
    {
      heading: '1 Summary of the year',
      level: 2,
      blocks: [
        { kind: 'paragraph', parts: [{ text: 'Orders grew in every region. See ' }, { text: 'the archive', href: 'https://example.com/archive' }, { text: ' for details.' }] },
        {
          kind: 'list',
          ordered: false,
          items: [{ text: 'Open two depots', children: [{ text: 'North depot in spring' }, { text: 'South depot in autumn' }] }, { text: 'Train the new staff' }],
        },
      ],
      notes: 'Mention the depot delays.',
    },
    {
      heading: '2 Figures by region',
      level: 2,
      blocks: [
        { kind: 'list', ordered: true, items: [{ text: 'Collect the counts' }, { text: 'Check the totals' }] },
        {
          kind: 'table',
          rows: [
            ['Region', 'Orders', 'Staff'],
            ['North', '1200', '14'],
            ['South', '830', '9'],
          ],
        },
      ],
    },
  ],
};

async function convert(bytes: Buffer, options: ConvertOptions): Promise<DocumentResult> {
  const result = await convertInProcess(bytes, options);
  if (!result.ok) throw new Error(`conversion failed: ${result.code} ${result.reason}`);
  return result;
}

const TABLE = '| Region | Orders | Staff |\n| --- | --- | --- |\n| North | 1200 | 14 |\n| South | 830 | 9 |';

describe('office documents', () => {
  it('DOCX: headings, nested and numbered lists, a table, a link and the stated metadata', async () => {
    const result = await convert(await specDocx(SPEC), { fileName: 'report.docx' });
    expect(result.format).to.equal('docx');
    const text = result.text.replace(/\*\*/g, '');
    expect(text).to.match(/^# Field Operations Report$/m);
    expect(text).to.match(/^#+ 1 Summary of the year$/m);
    expect(text).to.include('Orders grew in every region. See [the archive](https://example.com/archive) for details.');
    expect(text).to.include('- Open two depots\n  - North depot in spring\n  - South depot in autumn\n- Train the new staff');
    expect(text).to.include('1. Collect the counts\n2. Check the totals');
    expect(text).to.include(TABLE);
    expect(result.document).to.include({ format: 'docx', title: 'Field Operations Report', author: 'Harbor Author' });
    expect(result.document.created).to.match(/^\d{4}-\d\d-\d\dT/);
  });

  it('PPTX: a heading per slide, bullets by level, a table, and speaker notes only when asked', async () => {
    const bytes = await specPptx(SPEC);
    const result = await convert(bytes, { contentType: 'application/vnd.openxmlformats-officedocument.presentationml.presentation' });
    const text = result.text.replace(/\*\*/g, '');
    expect(text).to.include('<!-- slide 2 -->\n\n## 1 Summary of the year');
    expect(text).to.include('- Open two depots\n  - North depot in spring\n  - South depot in autumn\n- Train the new staff');
    expect(text).to.include('1. Collect the counts\n2. Check the totals');
    expect(text).to.include(TABLE);
    expect(text).to.include('[the archive](https://example.com/archive)');
    expect(text).not.to.include('depot delays');
    expect(result.document).to.include({ format: 'pptx', pages: 3, title: 'Field Operations Report', author: 'Harbor Author' });
    const withNotes = await convert(bytes, { fileName: 'deck.pptx', speakerNotes: true, pageMarkers: false });
    expect(withNotes.text).to.include('### Notes\n\nMention the depot delays.');
    expect(withNotes.text).not.to.include('<!-- slide');
  });

  it('XLSX: a table per sheet under its name, formulas as their values, empty margins trimmed', async () => {
    const result = await convert(await specXlsx(SPEC), { fileName: 'figures.xlsx' });
    expect(result.text).to.equal(`## 2 Figures by region\n\n${TABLE}\n| Total | 2030 | 23 |\n`);
    expect(result.document).to.include({ format: 'xlsx', pages: 1, author: 'Harbor Author', created: '2024-01-15T09:30:00.000Z' });
  });

  it('plain text output has no Markdown syntax', async () => {
    const result = await convert(await specDocx(SPEC), { fileName: 'report.docx', output: 'plaintext' });
    expect(result.output).to.equal('plaintext');
    expect(result.text).to.include('Field Operations Report');
    expect(result.text).to.include('North depot in spring');
    expect(result.text).to.match(/North\t1200\t14/);
    expect(result.text).not.to.match(/^#|\| --- \||\]\(/m);
  });

  it('CSV and ODF: tables, headings and lists', async () => {
    const csv = await convert(Buffer.from('Region;Orders\r\nNorth;1200\r\n"South; coast";830\r\n'), { contentType: 'text/csv' });
    expect(csv.text).to.equal('| Region | Orders |\n| --- | --- |\n| North | 1200 |\n| South; coast | 830 |\n');
    const content = `<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:xlink="http://www.w3.org/1999/xlink">
<office:body><office:text>
<text:h text:outline-level="1">Depot plan</text:h>
<text:p>Two depots open this year, see <text:a xlink:href="https://example.com/depots">the map</text:a>.</text:p>
<text:list><text:list-item><text:p>North</text:p><text:list><text:list-item><text:p>Spring</text:p></text:list-item></text:list></text:list-item><text:list-item><text:p>South</text:p></text:list-item></text:list>
<table:table table:name="T"><table:table-row><table:table-cell><text:p>Region</text:p></table:table-cell><table:table-cell><text:p>Staff</text:p></table:table-cell></table:table-row>
<table:table-row><table:table-cell><text:p>North</text:p></table:table-cell><table:table-cell office:value-type="float" office:value="14"><text:p>14</text:p></table:table-cell></table:table-row></table:table>
</office:text></office:body></office:document-content>`;
    const odt = repack([
      { name: 'mimetype', data: Buffer.from('application/vnd.oasis.opendocument.text') },
      { name: 'content.xml', data: Buffer.from(content) },
    ]);
    const result = await convert(odt, { contentType: 'application/octet-stream' });
    expect(result.format).to.equal('odt');
    expect(result.text).to.equal('# Depot plan\n\nTwo depots open this year, see [the map](https://example.com/depots).\n\n- North\n  - Spring\n- South\n\n| Region | Staff |\n| --- | --- |\n| North | 14 |\n');
  });
});
