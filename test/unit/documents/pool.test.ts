/**
 * The document worker pool: conversions run off the calling event loop, a job over its time or memory
 * budget ends its worker and a fresh one serves the next, and a full queue answers at once.
 */
import { expect } from 'chai';
import { createDocumentPool, type DocumentPool } from '../../../engine/documents';
import { zipBombDocx } from '../../fixtures/documents/hostile';
import { makeSpec } from '../../fixtures/documents/corpus';
import { specDocx } from '../../fixtures/documents/docx';
import { flow, writePdf } from '../../fixtures/documents/pdf-writer';

describe('document pool', () => {
  let pool: DocumentPool | undefined;
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
  });

  it('keeps the event loop turning while a DOCX that inflates to 200 MB is refused in a worker', async () => {
    pool = createDocumentPool({ workers: 1 });
    const bomb = await zipBombDocx(200);
    let turns = 0;
    let turning = true;
    const spin = () => {
      turns++;
      if (turning) setImmediate(spin);
    };
    setImmediate(spin);
    const before = turns;
    const result = await pool.convert(bomb, { fileName: 'bomb.docx' });
    turning = false;
    expect(result).to.include({ ok: false, code: 'document_too_large', reason: 'zip_inflated_size' });
    // Inflating 100 MB in this thread would have held the loop for the whole job: here it kept turning.
    expect(turns - before).to.be.greaterThan(20);
    const good = await pool.convert(await specDocx(makeSpec(7)), { fileName: 'fine.docx' });
    expect(good.ok).to.equal(true);
  });

  it('terminates a worker over its time and serves the next job with a new one', async () => {
    pool = createDocumentPool({ workers: 1, timeoutMs: 1 });
    const pdf = writePdf(flow([{ kind: 'paragraph', text: 'A short page.' }]));
    const late = await pool.convert(pdf);
    expect(late).to.include({ ok: false, code: 'document_too_complex', reason: 'timeout' });
    expect(pool.stats().terminated).to.equal(1);
    await pool.close();
    pool = createDocumentPool({ workers: 1 });
    const result = await pool.convert(pdf);
    expect(result.ok && result.text).to.include('A short page.');
  });

  it('ends a worker that runs out of heap, and answers the job as too large', async () => {
    pool = createDocumentPool({ workers: 1, memoryMb: 24 });
    const rows = Array.from({ length: 400_000 }, (_, i) => `row ${i},${i * 3},some text in a cell ${i},${i % 7}`).join('\n');
    const result = await pool.convert(Buffer.from(rows), { contentType: 'text/csv' });
    expect(result).to.include({ ok: false, code: 'document_too_large', reason: 'memory' });
    const next = await pool.convert(Buffer.from('a,b\n1,2\n'), { contentType: 'text/csv' });
    expect(next.ok).to.equal(true);
  });

  it('answers documents_busy at once when every worker is busy and the queue is full', async () => {
    pool = createDocumentPool({ workers: 1, queue: 1 });
    const pdf = writePdf(flow([{ kind: 'paragraph', text: 'Queued work.' }]));
    const first = pool.convert(pdf);
    const second = pool.convert(pdf);
    const third = await pool.convert(pdf);
    expect(third).to.include({ ok: false, code: 'documents_busy', reason: 'queue' });
    expect((await first).ok).to.equal(true);
    expect((await second).ok).to.equal(true);
  });

  it('with no waiting room, still gives a job to an idle worker and refuses only what would wait', async () => {
    pool = createDocumentPool({ workers: 1, queue: 0 });
    const pdf = writePdf(flow([{ kind: 'paragraph', text: 'No waiting room.' }]));
    expect((await pool.convert(pdf)).ok).to.equal(true);
    const first = pool.convert(pdf);
    expect(await pool.convert(pdf)).to.include({ ok: false, code: 'documents_busy' });
    expect((await first).ok).to.equal(true);
    expect((await pool.convert(pdf)).ok).to.equal(true);
  });
});
