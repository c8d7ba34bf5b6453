/**
 * Hostile documents each end in a typed failure with a stable code, converted in this thread (the pool
 * test shows the same through workers): nothing throws, nothing hangs, nothing is read that should not be.
 */
import { expect } from 'chai';
import { convertInProcess } from '../../../engine/documents/convert';
import { DEFAULT_DOCUMENT_LIMITS } from '../../../engine/documents/limits';
import type { ConvertOptions, DocumentFailure } from '../../../engine/documents/types';
import { specDocx } from '../../fixtures/documents/docx';
import { deepDocx, deepPdf, encryptedOoxml, encryptedPdf, legacyDoc, loopingPdf, truncatedPdf, xxeDocx, zipBombDocx } from '../../fixtures/documents/hostile';
import { makeSpec } from '../../fixtures/documents/corpus';

async function refused(bytes: Buffer, options: ConvertOptions = {}): Promise<DocumentFailure> {
  const result = await convertInProcess(bytes, options);
  if (result.ok) throw new Error(`expected a failure, got ${result.format} text of ${result.text.length} characters`);
  expect(result.detail).to.be.a('string').and.not.match(/\bat \w|\/work\/|node_modules/);
  return result;
}

describe('hostile documents', () => {
  it('a DOCX that inflates to 200 MB is too large, stopped while inflating', async () => {
    const bomb = await zipBombDocx(200);
    expect(bomb.length).to.be.lessThan(1024 * 1024);
    expect(await refused(bomb, { fileName: 'bomb.docx' })).to.include({ code: 'document_too_large', reason: 'zip_inflated_size' });
  });

  it('XML with an external entity is refused before any parser sees it', async () => {
    expect(await refused(xxeDocx(), { fileName: 'x.docx' })).to.include({ code: 'document_unreadable', reason: 'xml_dtd' });
  });

  it('nesting deeper than the cap is too complex', async () => {
    expect(await refused(deepDocx(5000), { fileName: 'deep.docx' })).to.include({ code: 'document_too_complex', reason: 'xml_depth' });
  });

  it('encrypted PDFs and encrypted Office files need a password', async () => {
    expect(await refused(encryptedPdf())).to.include({ code: 'document_encrypted', reason: 'pdf_password' });
    expect(await refused(encryptedOoxml(), { fileName: 'secret.docx', contentType: 'application/octet-stream' })).to.include({ code: 'document_encrypted' });
  });

  it('truncated files are unreadable', async () => {
    expect(await refused(truncatedPdf())).to.include({ code: 'document_unreadable', reason: 'pdf_truncated' });
    const docx = await specDocx(makeSpec(5));
    expect(await refused(docx.subarray(0, Math.floor(docx.length / 2)), { fileName: 'cut.docx' })).to.include({ code: 'document_unreadable' });
  });

  it('a PDF whose page tree contains itself is unreadable', async () => {
    expect((await refused(loopingPdf())).code).to.equal('document_unreadable');
  });

  it('a PDF whose objects nest a hundred thousand deep is unreadable, not a crash', async () => {
    expect((await refused(deepPdf(100_000))).code).to.equal('document_unreadable');
  });

  it('legacy Office files and unknown bytes are unsupported; oversized files too large', async () => {
    expect(await refused(legacyDoc(), { fileName: 'old.doc', contentType: 'application/msword' })).to.include({ code: 'document_unsupported', reason: 'legacy_office' });
    expect(await refused(Buffer.from('just some text'), { contentType: 'application/octet-stream' })).to.include({ code: 'document_unsupported' });
    const small = { ...DEFAULT_DOCUMENT_LIMITS, maxBytes: 1000 };
    const result = await convertInProcess(Buffer.alloc(2000, 0x25), {}, small);
    expect(result).to.include({ ok: false, code: 'document_too_large', reason: 'bytes' });
  });
});
