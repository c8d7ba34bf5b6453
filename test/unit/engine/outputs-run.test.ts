/**
 * Where an HTML output runs (engine/outputs/run.ts): small and shallow pages on the caller's thread,
 * big, deep or dense ones on a worker thread, with the same answer; refusals name the cap or budget.
 */
import { expect } from 'chai';
import { HtmlOutputs, isHtmlRefused, toMarkdown, toPlainText, type HtmlSource } from '../../../engine/outputs';
import { WorkerPool } from '../../../engine/threads';
import { SAMPLE_PAGES } from '../../fixtures/pages';

const URL = 'https://example.test/page';
const CAPS = { maxChars: 10 * 1024 * 1024, maxNodes: 200_000, maxDepth: 50_000 };

async function refusalOf(work: Promise<unknown>): Promise<{ limit: string; value: number }> {
  try {
    await work;
  } catch (error) {
    if (isHtmlRefused(error)) return { limit: error.limit, value: error.value };
    throw error;
  }
  throw new Error('the page was not refused');
}

describe('HTML outputs, inline or on a worker thread', () => {
  let pool: WorkerPool;
  let outputs: HtmlOutputs;
  beforeEach(() => {
    pool = new WorkerPool({ size: 1, queueLimit: 8, timeoutMs: 30_000, memoryMb: 256 });
    outputs = new HtmlOutputs({ pool, caps: CAPS, inlineMaxChars: 64 * 1024, inlineMaxNodes: 8_000, timeoutMs: 30_000, memoryMb: 256 });
  });
  afterEach(() => pool.close());

  it('converts a small page on the caller\'s thread, without starting a thread', async () => {
    const html = '<main><h1>Title</h1><p>Some <b>bold</b> text.</p></main>';
    expect(await outputs.run('markdown', { html }, { url: URL })).to.equal(toMarkdown(html, URL));
    expect(pool.stats().threads).to.equal(0);
  });

  it('converts a big page on a thread, from its bytes, to the same answer as inline', async () => {
    const html = SAMPLE_PAGES.map((page) => page.html).join('\n');
    expect(html.length).to.be.greaterThan(64 * 1024);
    const bytes: HtmlSource = { bytes: Buffer.from(html, 'utf8'), contentType: 'text/html; charset=utf-8' };
    expect(await outputs.run('markdown', bytes, { url: URL })).to.equal(toMarkdown(html, URL));
    expect(await outputs.run('plaintext', { html }, {})).to.equal(toPlainText(html));
    expect(pool.stats().threads).to.equal(1);
  });

  it('sends a small page nested deeper than 400 levels, or packed with elements, to a thread', async () => {
    const deep = `${'<div>'.repeat(1_000)}deep${'</div>'.repeat(1_000)}`;
    expect(await outputs.run('plaintext', { html: deep }, {})).to.equal('deep');
    expect(pool.stats().threads).to.equal(1);
    await pool.close();
    pool = new WorkerPool({ size: 1, queueLimit: 8, timeoutMs: 30_000, memoryMb: 256 });
    outputs = new HtmlOutputs({ pool, caps: CAPS, inlineMaxChars: 64 * 1024, inlineMaxNodes: 8_000, timeoutMs: 30_000, memoryMb: 256 });
    const dense = `<p>${'<br>'.repeat(10_000)}packed</p>`; // 40 KB, 10,000 nodes
    expect(await outputs.run('plaintext', { html: dense }, {})).to.equal('packed');
    expect(pool.stats().threads).to.equal(1);
  });

  it('refuses a page past a parse cap, inline and on a thread, naming the cap', async () => {
    const small = new HtmlOutputs({ pool, caps: { ...CAPS, maxNodes: 1_000 }, inlineMaxChars: 64 * 1024, inlineMaxNodes: 8_000, timeoutMs: 30_000, memoryMb: 256 });
    expect(await refusalOf(small.run('markdown', { html: '<p>x</p>'.repeat(600) }, { url: URL }))).to.deep.equal({ limit: 'nodes', value: 1_000 });
    expect(pool.stats().threads).to.equal(0);
    const big = `${'<div>'.repeat(60_000)}deep${'</div>'.repeat(60_000)}`;
    expect(await refusalOf(outputs.run('mainContent', { bytes: Buffer.from(big) }, { url: URL, format: 'markdown' }))).to.deep.equal({ limit: 'depth', value: 50_000 });
    expect(await refusalOf(outputs.run('markdown', { html: 'x'.repeat(CAPS.maxChars + 1) }, { url: URL }))).to.deep.equal({ limit: 'size', value: CAPS.maxChars });
  });

  it('refuses a page whose output takes longer than the time budget, and serves the next page', async () => {
    const hurried = new HtmlOutputs({ pool, caps: CAPS, inlineMaxChars: 0, inlineMaxNodes: 0, timeoutMs: 5, memoryMb: 256 });
    // Every sample page together: far more than 5 ms of main-content work on any machine.
    const html = SAMPLE_PAGES.map((page) => page.html).join('\n').repeat(4);
    expect(await refusalOf(hurried.run('mainContent', { html }, { url: URL, format: 'markdown' }))).to.deep.equal({ limit: 'time', value: 5 });
    expect(await outputs.run('markdown', { html: '<h1>Next</h1>' }, { url: URL })).to.equal('# Next');
  });
});
