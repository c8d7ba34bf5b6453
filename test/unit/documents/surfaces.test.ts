/**
 * The pieces every document surface shares: which answers are documents (a page that mentions a PDF
 * header stays a page; a type named like an Object member is no format), the page rule of the price,
 * the problem a failure becomes, the HTML rendering the JSON envelope and crawls use, and reading an
 * upload as it arrives (raw or multipart, refused past its cap without reading the rest).
 */
import { expect } from 'chai';
import { convertInProcess } from '../../../engine/documents/convert';
import { detectDocument, documentFormatOfName, documentFormatOfType } from '../../../engine/documents/detect';
import { documentSurcharge } from '../../../core/documents/price';
import { documentProblem } from '../../../core/documents/problems';
import { readUpload } from '../../../core/documents/upload';
import { documentOf } from '../../../core/documents/fetch';
import { isApiError, type ApiError } from '../../../base/errors';
import { makeSpec } from '../../fixtures/documents/corpus';
import { specDocx } from '../../fixtures/documents/docx';
import { writePdf } from '../../fixtures/documents/pdf-writer';

async function* chunksOf(buffer: Buffer, size = 1000): AsyncGenerator<Buffer> {
  for (let at = 0; at < buffer.length; at += size) yield buffer.subarray(at, at + size);
}

/** Chunks that count how many were taken: a refused upload stops reading. */
function counted(buffer: Buffer, size: number): { chunks: AsyncIterable<Buffer>; taken: () => number } {
  let taken = 0;
  return {
    chunks: (async function* () {
      for (let at = 0; at < buffer.length; at += size) {
        taken++;
        yield buffer.subarray(at, at + size);
      }
    })(),
    taken: () => taken,
  };
}

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (isApiError(error)) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

function multipart(boundary: string, parts: Array<{ name: string; fileName?: string; type?: string; data: Buffer | string }>): Buffer {
  const pieces: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.fileName ? `; filename="${part.fileName}"` : ''}`;
    pieces.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${part.type ? `Content-Type: ${part.type}\r\n` : ''}\r\n`));
    pieces.push(Buffer.isBuffer(part.data) ? part.data : Buffer.from(part.data));
    pieces.push(Buffer.from('\r\n'));
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(pieces);
}

const pdf = writePdf([{ texts: [{ x: 72, y: 700, size: 18, text: 'Quarterly report' }, { x: 72, y: 660, size: 11, text: 'Revenue grew in every region.' }] }]);

describe('documents on the surfaces', () => {
  describe('detection', () => {
    it('keeps an HTML page that mentions %PDF- near its top a page, and a PDF served as HTML a PDF', () => {
      const page = Buffer.from('<!doctype html><html><body><p>Every PDF starts with %PDF-1.7 and ends with %%EOF.</p></body></html>');
      expect(detectDocument(page, { contentType: 'text/html; charset=utf-8' })).to.equal(null);
      expect(detectDocument(pdf, { contentType: 'text/html' })).to.equal('pdf');
      expect(detectDocument(Buffer.concat([Buffer.from('\n\n'), pdf]), { contentType: 'text/html' })).to.equal('pdf');
    });

    it('names no format for types and names that are members of every object', () => {
      for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
        expect(documentFormatOfType(name)).to.equal(null);
        expect(documentFormatOfName(`x.${name}`)).to.equal(null);
        expect(detectDocument(Buffer.from('plain'), { contentType: name })).to.equal(null);
        expect(detectDocument(Buffer.from('plain'), { contentType: 'application/octet-stream', fileName: `file.${name}` })).to.equal(null);
      }
      expect(documentFormatOfName('/files/Q3.PDF')).to.equal('pdf');
      expect(documentFormatOfName('/files/q3.xlsx?v=2')).to.equal('xlsx');
      expect(documentFormatOfType('application/vnd.openxmlformats-officedocument.wordprocessingml.document; charset=binary')).to.equal('docx');
    });

    it('reads a file served as application/octet-stream by its Content-Disposition name, or by its URL', () => {
      const base = { html: undefined, finalUrl: 'http://files.test/download?id=7', contentType: 'application/octet-stream' };
      expect(documentOf({ ...base, headers: [['content-disposition', 'attachment; filename="q3.pdf"']], body: pdf })).to.deep.equal({ format: 'pdf', fileName: 'q3.pdf' });
      const csv = Buffer.from('Region,Orders\nNorth,12\n');
      expect(documentOf({ ...base, headers: [['content-disposition', "attachment; filename*=UTF-8''orders%20Q3.csv"]], body: csv })?.format).to.equal('csv');
      expect(documentOf({ ...base, finalUrl: 'http://files.test/orders.csv', headers: [], body: csv })?.format).to.equal('csv');
      expect(documentOf({ ...base, headers: [], body: csv })).to.equal(null);
      // A legacy Office file is recognised (its conversion answers document_unsupported), not taken for a page.
      expect(documentOf({ ...base, contentType: 'application/msword', headers: [], body: Buffer.from('binary') })).to.deep.equal({ format: null, fileName: '/download' });
      // A rendered page is never a document: its HTML is what the browser made of it.
      expect(documentOf({ ...base, html: '<html></html>', headers: [], body: pdf })).to.equal(null);
    });
  });

  it('prices PDF pages past the first 50 at one credit per started 50, and nothing else', () => {
    const pages = (count: number | null, format: 'pdf' | 'pptx' | 'docx' = 'pdf') => documentSurcharge({ format, pages: count });
    expect([pages(1), pages(50), pages(51), pages(100), pages(101), pages(300), pages(null)]).to.deep.equal([0, 0, 1, 1, 2, 5, 0]);
    expect([pages(900, 'pptx'), pages(900, 'docx')]).to.deep.equal([0, 0]);
  });

  it('turns failures into problems with the stable code, the cap named, and Retry-After when busy', () => {
    const bomb = documentProblem({ ok: false, code: 'document_too_large', reason: 'zip_inflated_size', detail: 'The document inflates past the cap.' });
    expect([bomb.status, bomb.code, bomb.members.limit, bomb.members.reason]).to.deep.equal([413, 'document_too_large', 'DOCUMENT_MAX_INFLATED_BYTES', 'zip_inflated_size']);
    const busy = documentProblem({ ok: false, code: 'documents_busy', reason: 'queue', detail: 'Busy.' });
    expect([busy.status, busy.headers['Retry-After']]).to.deep.equal([503, '5']);
    const broken = documentProblem({ ok: false, code: 'document_unreadable', reason: 'constructor', detail: 'Broken.' });
    expect([broken.status, broken.members.limit]).to.deep.equal([422, undefined]);
  });

  it('renders the structure as one HTML document with page markers, and a second shape from the same reading', async () => {
    const twoPages = writePdf([{ texts: [{ x: 72, y: 700, size: 11, text: 'First page text.' }] }, { texts: [{ x: 72, y: 700, size: 11, text: 'Second page text.' }] }]);
    const result = await convertInProcess(twoPages, { output: 'html', also: 'markdown' });
    if (!result.ok) throw new Error(result.detail);
    expect(result.text).to.match(/^<html><body>\n<!-- page 1 -->\n<p>First page text\.<\/p>\n<!-- page 2 -->\n<p>Second page text\.<\/p>\n<\/body><\/html>\n$/);
    expect(result.also).to.equal('<!-- page 1 -->\n\nFirst page text.\n\n<!-- page 2 -->\n\nSecond page text.\n');
    const docx = await convertInProcess(await specDocx(makeSpec(3)), { output: 'html' });
    if (!docx.ok) throw new Error(docx.detail);
    expect(docx.text.match(/<html>/g)?.length).to.equal(1);
  });

  describe('reading an upload', () => {
    it('reads a raw body with its type, and its name from Content-Disposition or file_name', async () => {
      const raw = await readUpload(chunksOf(pdf), { contentType: 'application/octet-stream', disposition: 'attachment; filename="report.pdf"' }, 1_000_000);
      expect([raw.bytes.equals(pdf), raw.contentType, raw.fileName]).to.deep.equal([true, 'application/octet-stream', 'report.pdf']);
      const named = await readUpload(chunksOf(pdf), { contentType: 'application/octet-stream', disposition: 'attachment; filename="a.pdf"', fileName: 'b.pdf' }, 1_000_000);
      expect(named.fileName).to.equal('b.pdf');
    });

    it('takes the first file part of multipart/form-data, with its name and type, beside other fields', async () => {
      const body = multipart('XyZ', [
        { name: 'note', data: 'ignored' },
        { name: 'file', fileName: 'deck.pdf', type: 'application/pdf', data: pdf },
        { name: 'second', fileName: 'other.pdf', type: 'application/pdf', data: 'second file' },
      ]);
      const upload = await readUpload(chunksOf(body, 97), { contentType: 'multipart/form-data; boundary=XyZ' }, 1_000_000);
      expect([upload.bytes.equals(pdf), upload.contentType, upload.fileName]).to.deep.equal([true, 'application/pdf', 'deck.pdf']);
    });

    it('refuses past the cap while reading, without reading the rest, raw and multipart alike', async () => {
      const big = Buffer.alloc(200_000, 0x41);
      const raw = counted(big, 1_000);
      const rawRefusal = await refusal(readUpload(raw.chunks, {}, 50_000));
      expect([rawRefusal.status, rawRefusal.code, rawRefusal.members.limit]).to.deep.equal([413, 'document_too_large', 'DOCUMENT_MAX_BYTES']);
      expect(raw.taken()).to.be.lessThan(60);
      const form = counted(multipart('B', [{ name: 'file', fileName: 'big.pdf', data: big }]), 1_000);
      const formRefusal = await refusal(readUpload(form.chunks, { contentType: 'multipart/form-data; boundary=B' }, 50_000));
      expect(formRefusal.code).to.equal('document_too_large');
      expect(form.taken()).to.be.lessThan(80);
      const declared = await refusal(readUpload(chunksOf(Buffer.alloc(10)), { contentLength: 10_000_000 }, 50_000));
      expect(declared.code).to.equal('document_too_large');
    });

    it('refuses an empty body, a form without a file, and a form without a boundary with 400', async () => {
      const codes = await Promise.all([
        refusal(readUpload(chunksOf(Buffer.alloc(0)), { contentType: 'application/pdf' }, 1_000)),
        refusal(readUpload(chunksOf(multipart('B', [{ name: 'note', data: 'no file' }])), { contentType: 'multipart/form-data; boundary=B' }, 1_000)),
        refusal(readUpload(chunksOf(Buffer.from('x')), { contentType: 'multipart/form-data' }, 1_000)),
        refusal(readUpload(chunksOf(Buffer.from('--B\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\nunterminated')), { contentType: 'multipart/form-data; boundary=B' }, 1_000)),
      ]);
      expect(codes.map((error) => [error.status, error.code])).to.deep.equal([
        [400, 'invalid_request'],
        [400, 'invalid_request'],
        [400, 'invalid_request'],
        [400, 'invalid_request'],
      ]);
    });
  });
});
