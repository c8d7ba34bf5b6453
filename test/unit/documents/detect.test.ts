/**
 * Which answers are documents: by Content-Type, by their bytes (PDF header, OOXML part names, ODF's
 * mimetype entry) and, for the generic types servers send files with, by the Content-Disposition file
 * name, including a file served over HTTP as application/octet-stream.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { convertInProcess } from '../../../engine/documents/convert';
import { detectDocument, fileNameFromDisposition } from '../../../engine/documents/detect';
import { repack } from '../../../engine/documents/zip';
import { makeSpec } from '../../fixtures/documents/corpus';
import { specDocx } from '../../fixtures/documents/docx';
import { specPptx } from '../../fixtures/documents/pptx';
import { specXlsx } from '../../fixtures/documents/xlsx';
import { writePdf } from '../../fixtures/documents/pdf-writer';

const pdf = writePdf([{ texts: [{ x: 72, y: 700, size: 12, text: 'Served as a download.' }] }]);

describe('document detection', () => {
  it('knows formats by their bytes whatever the type says', async () => {
    const spec = makeSpec(11);
    expect(detectDocument(pdf, { contentType: 'text/html' })).to.equal('pdf');
    expect(detectDocument(await specDocx(spec), { contentType: 'application/octet-stream' })).to.equal('docx');
    expect(detectDocument(await specPptx(spec))).to.equal('pptx');
    expect(detectDocument(await specXlsx(spec), { contentType: 'application/zip' })).to.equal('xlsx');
    const ods = repack([{ name: 'mimetype', data: Buffer.from('application/vnd.oasis.opendocument.spreadsheet') }]);
    expect(detectDocument(ods)).to.equal('ods');
  });

  it('knows formats by Content-Type, and by file name only for generic types', () => {
    const text = Buffer.from('Region,Orders\nNorth,12\n');
    expect(detectDocument(text, { contentType: 'text/csv; charset=utf-8' })).to.equal('csv');
    expect(detectDocument(text, { contentType: 'application/octet-stream', fileName: 'orders.csv' })).to.equal('csv');
    expect(detectDocument(text, { contentType: 'text/html', fileName: 'orders.csv' })).to.equal(null);
    expect(detectDocument(Buffer.from('<html><body>hi</body></html>'), { contentType: 'text/html' })).to.equal(null);
    expect(detectDocument(Buffer.from('not a zip'), { contentType: 'application/octet-stream', fileName: 'report.docx' })).to.equal(null);
    expect(detectDocument(Buffer.from('%PD'), { contentType: 'application/pdf' })).to.equal('pdf');
  });

  it('reads the file name of a Content-Disposition header', () => {
    expect(fileNameFromDisposition('attachment; filename="Q3 report.pdf"')).to.equal('Q3 report.pdf');
    expect(fileNameFromDisposition("attachment; filename*=UTF-8''R%C3%A9sum%C3%A9.docx; filename=\"Resume.docx\"")).to.equal('Résumé.docx');
    expect(fileNameFromDisposition('attachment; filename=../../etc/figures.xlsx')).to.equal('figures.xlsx');
    expect(fileNameFromDisposition('inline')).to.equal(undefined);
    expect(fileNameFromDisposition(undefined)).to.equal(undefined);
  });

  describe('a file served as application/octet-stream', () => {
    let server: Server;
    let base = '';
    before(async () => {
      const docx = await specDocx(makeSpec(12));
      server = createServer((request, response) => {
        const body = request.url === '/download?id=1' ? pdf : docx;
        const name = request.url === '/download?id=1' ? 'statement.pdf' : 'minutes.docx';
        response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-disposition': `attachment; filename="${name}"` });
        response.end(body);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('is detected and converted from its bytes and its file name', async () => {
      for (const [path, format, text] of [
        ['/download?id=1', 'pdf', 'Served as a download.'],
        ['/download?id=2', 'docx', makeSpec(12).title],
      ] as const) {
        const response = await fetch(base + path);
        const bytes = Buffer.from(await response.arrayBuffer());
        const hints = { contentType: response.headers.get('content-type') ?? undefined, fileName: fileNameFromDisposition(response.headers.get('content-disposition') ?? undefined) };
        expect(detectDocument(bytes, hints)).to.equal(format);
        const result = await convertInProcess(bytes, hints);
        expect(result.ok && result.format).to.equal(format);
        expect(result.ok && result.text).to.include(text);
      }
    });
  });
});
