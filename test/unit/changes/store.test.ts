import { expect } from 'chai';
import { ApiError } from '../../../base/errors';
import { comparedText, contentKind, pack, pageOf, unpack } from '../../../core/changes/content';
import { parseVersionId, resolveKey, versionIdOf } from '../../../core/changes/keys';
import { parseAsOf, parseChangeParams } from '../../../core/changes/params';
import { changeIds, keyHash, newGeneration } from '../../../core/changes/store';
import { changeMarks } from '../../../core/crawls/store';
import { urlKey } from '../../../core/crawls/urls';
import { HtmlOutputs, toMarkdown } from '../../../engine/outputs';
import { WorkerPool } from '../../../engine/threads';

const NO_BROWSER = { screenshot: false, pdf: false, instructions: false };

function refusal(run: () => unknown): { code: string; parameter: unknown } {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return { code: error.code, parameter: error.members.parameter };
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('change tracking: what names a history, a version and a page as kept', () => {
  it('keys a URL as crawls compare URLs: scheme, www., a trailing slash, tracking parameters and the fragment do not count', () => {
    const key = urlKey('https://www.shop.example/p/1/?utm_source=x&id=3#top');
    expect(key).to.equal('shop.example/p/1?id=3');
    for (const twin of ['http://shop.example/p/1?id=3', 'https://shop.example/p/1/?id=3&gclid=abc', 'HTTPS://WWW.Shop.Example/p/1?id=3']) expect(urlKey(twin), twin).to.equal(key);
    expect(urlKey('https://shop.example/p/1?id=4')).to.not.equal(key);
    expect(urlKey('https://shop.example:8443/p/1?id=3')).to.not.equal(key);
    expect(urlKey('ftp://shop.example/p')).to.equal(undefined);
    expect(urlKey('not a url')).to.equal(undefined);
  });

  it('names a track by account, URL key and tag, and a version id that says nothing of the account', () => {
    const plain = resolveKey({ accountId: 'acc_a', url: 'https://shop.example/p/1' });
    const tagged = resolveKey({ accountId: 'acc_a', url: 'https://shop.example/p/1', tag: 'mobile' });
    const other = resolveKey({ accountId: 'acc_b', url: 'http://www.shop.example/p/1/' });
    expect(plain?.hash).to.match(/^[0-9a-f]{32}$/);
    expect(plain?.hash).to.equal(keyHash('shop.example/p/1', ''));
    expect(tagged?.hash).to.not.equal(plain?.hash);
    expect(other?.hash).to.equal(plain?.hash);
    expect(other?.id).to.not.equal(plain?.id);
    const gen = newGeneration();
    expect(gen).to.match(/^[0-9a-z]{8}$/);
    const id = versionIdOf({ hash: plain?.hash ?? '', gen, seq: 42 });
    expect(id).to.not.contain('acc_');
    expect(parseVersionId(id)).to.deep.equal({ hash: plain?.hash, gen, seq: 42 });
    for (const bad of ['v1.abc', `v2.${plain?.hash ?? ''}.${gen}.1`, `v1.${plain?.hash ?? ''}.${gen}.0`, `v1.${plain?.hash ?? ''}.${gen}.01`, `v1.${plain?.hash ?? ''}.${gen}.1.2`]) expect(parseVersionId(bad), bad).to.equal(undefined);
    expect(changeIds.version('acc_a|h', gen, 7)).to.equal(`acc_a|h|${gen}|0000000007`);
  });

  it('reads as_of as an RFC 3339 time with its offset or a version id, and refuses the rest naming it', () => {
    expect(parseAsOf('2026-05-01T12:00:00Z')).to.deep.equal({ kind: 'time', at: new Date('2026-05-01T12:00:00Z') });
    expect(parseAsOf('2026-05-01T14:00:00.5+02:00')).to.deep.equal({ kind: 'time', at: new Date('2026-05-01T12:00:00.500Z') });
    const id = versionIdOf({ hash: 'a'.repeat(32), gen: 'abcdefgh', seq: 3 });
    expect(parseAsOf(id)).to.deep.equal({ kind: 'version', id });
    for (const bad of ['2026-05-01', '2026-05-01T12:00:00', 'yesterday', 'v1.zz', '2026-13-45T99:00:00Z']) {
      expect(refusal(() => parseAsOf(bad)), bad).to.deep.equal({ code: 'REQS004', parameter: 'as_of' });
    }
  });

  it('ties the change parameters together: as_of reads, track_changes writes, a tag goes with one of them', () => {
    expect(parseChangeParams({ track_changes: true, change_tracking_tag: 'eu' }, NO_BROWSER)).to.deep.equal({ trackChanges: true, changeTrackingTag: 'eu' });
    expect(parseChangeParams({}, NO_BROWSER)).to.deep.equal({ trackChanges: false });
    expect(refusal(() => parseChangeParams({ track_changes: true, as_of: '2026-05-01T12:00:00Z' }, NO_BROWSER)).parameter).to.equal('as_of');
    expect(refusal(() => parseChangeParams({ change_tracking_tag: 'eu' }, NO_BROWSER)).parameter).to.equal('change_tracking_tag');
    expect(refusal(() => parseChangeParams({ as_of: '2026-05-01T12:00:00Z' }, { ...NO_BROWSER, pdf: true })).parameter).to.equal('as_of');
  });

  it('compares an HTML page on its Markdown, a text answer as it is, and anything else by its bytes', async () => {
    const html = '<html><body><h1>Title</h1><p>Body <a href="/x">link</a></p></body></html>';
    const base = { finalUrl: 'https://shop.example/p', status: 200, fetchedAt: new Date() };
    expect(contentKind({ body: Buffer.from(html), contentType: 'text/html' })).to.equal('html');
    expect(contentKind({ body: Buffer.from(html) })).to.equal('html');
    expect(contentKind({ body: Buffer.from('{"a":1}'), contentType: 'application/json' })).to.equal('text');
    expect(contentKind({ body: Buffer.from('%PDF-1.7'), contentType: 'application/pdf' })).to.equal('binary');
    const pool = new WorkerPool({ size: 1, queueLimit: 4, timeoutMs: 30_000, memoryMb: 256 });
    try {
      // A small page converted inline, a big one on the pool's thread: the same Markdown.
      const inline = new HtmlOutputs({ pool, caps: { maxChars: 1 << 20, maxNodes: 10_000, maxDepth: 1_000 }, inlineMaxChars: 64 * 1024, inlineMaxNodes: 1_000, timeoutMs: 30_000, memoryMb: 256 });
      const threaded = new HtmlOutputs({ pool, caps: { maxChars: 1 << 20, maxNodes: 10_000, maxDepth: 1_000 }, inlineMaxChars: 0, inlineMaxNodes: 0, timeoutMs: 30_000, memoryMb: 256 });
      for (const outputs of [inline, threaded]) {
        expect(await comparedText({ ...base, body: Buffer.from(html), contentType: 'text/html' }, 'h', outputs)).to.equal(toMarkdown(html, base.finalUrl));
        expect(await comparedText({ ...base, body: Buffer.from('{"a":1}\n'), contentType: 'application/json' }, 'h', outputs)).to.equal('{"a":1}\n');
        expect(await comparedText({ ...base, body: Buffer.from('%PDF-1.7'), contentType: 'application/pdf' }, 'abc', outputs)).to.contain('sha-256 abc');
        // What a Fetch made already is not made again.
        expect(await comparedText({ ...base, body: Buffer.from(html), markdown: 'given' }, 'h', outputs)).to.equal('given');
      }
      // A page past the parse caps is refused, as a Fetch's shaping refuses it.
      const deep = '<div>'.repeat(2_000);
      const refused = await comparedText({ ...base, body: Buffer.from(deep), contentType: 'text/html' }, 'h', inline).then(() => undefined, (error: unknown) => error);
      expect(refused).to.be.instanceOf(Error).and.to.have.property('limit', 'depth');
    } finally {
      await pool.close();
    }

    const stored = await pack(Buffer.from(html));
    expect((await unpack(stored)).toString()).to.equal(html);
    const page = pageOf({ hash: 'h', blob: 'b', size: html.length, stored: stored.length, content_type: 'text/html', final_url: base.finalUrl, status: 200, headers: '[["content-type","text/html"],["x-bad"]]' }, Buffer.from(html));
    expect(page.headers).to.deep.equal([['content-type', 'text/html']]);
    expect(page).to.include({ status: 200, finalUrl: base.finalUrl, contentType: 'text/html' });
    expect(pageOf({ hash: 'h', blob: 'b', size: 1, stored: 1, final_url: base.finalUrl, status: 200, headers: 'not json', rendered: true }, Buffer.from(html)).html).to.equal(html);
  });

  it('marks each crawl result’s change status in one character', () => {
    const marks = changeMarks.encode(['new', undefined, 'same', 'changed']);
    expect(marks).to.equal('n-sc');
    expect([0, 1, 2, 3, 4].map((position) => changeMarks.decode(marks, position))).to.deep.equal(['new', undefined, 'same', 'changed', undefined]);
    expect(changeMarks.decode(undefined, 0)).to.equal(undefined);
  });
});
