/**
 * The pre-scan of a page as it downloads (engine/outputs/scan/stream.ts, engine/outputs/page-watch.ts):
 * split anywhere, it never refuses a page the whole-page scan accepts, it reaches the whole-page scan's
 * depth on complete pages, and it refuses a deep page within its first part.
 */
import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import iconv from 'iconv-lite';
import { scanHtml, type ParseCaps } from '../../../engine/outputs/scan';
import { StreamScan } from '../../../engine/outputs/scan/stream';
import { watchPage } from '../../../engine/outputs/page-watch';
import { SAMPLE_PAGES } from '../../fixtures/pages';
import { seeded } from '../../helpers/random';
const UNCAPPED: ParseCaps = { maxChars: Number.MAX_SAFE_INTEGER, maxNodes: Number.MAX_SAFE_INTEGER, maxDepth: Number.MAX_SAFE_INTEGER };


/** `text` in pieces: of `size` characters, or of random sizes up to `size` when `next` is given. */
function split(text: string, size: number, next?: () => number): string[] {
  const pieces: string[] = [];
  for (let at = 0; at < text.length; ) {
    const length = next ? 1 + Math.floor(next() * size) : size;
    pieces.push(text.slice(at, at + length));
    at += length;
  }
  return pieces;
}

/** The stream scan of `pieces` under `caps`: its refusal, or its counts once every piece is in. */
function streamed(pieces: string[], caps: ParseCaps): { refused: string } | { nodes: number; depth: number } {
  const scan = new StreamScan(caps);
  for (const piece of pieces) {
    const refusal = scan.push(piece);
    if (refusal) return { refused: refusal.cap };
  }
  return scan.counts;
}

/**
 * The property that matters: under caps the whole page just meets, no split of it is refused; and the
 * stream's counts never pass the whole-page scan's.
 */
function expectNeverStricter(html: string, next: () => number): void {
  const whole = scanHtml(html, UNCAPPED);
  if (!whole.ok) throw new Error('refused without caps');
  const exact: ParseCaps = { maxChars: html.length, maxNodes: whole.nodes, maxDepth: whole.depth };
  for (const pieces of [[html], split(html, 1), split(html, 3), split(html, 64, next), split(html, 4096, next)]) {
    const result = streamed(pieces, exact);
    expect(result, JSON.stringify(html.slice(0, 200))).to.not.have.property('refused');
    const counts = result as { nodes: number; depth: number };
    expect(counts.depth).to.be.at.most(whole.depth);
    expect(counts.nodes).to.be.at.most(whole.nodes);
  }
}

const ATOMS = [
  '<', '>', '/', '"', "'", '=', ' ', '\n', '\t', '\u00a0', '\ufeff', 'a', 'b', 'p', 'i', 'li', 'ul', 'ol', 'dl', 'dt', 'dd', 'td', 'th', 'tr',
  'tbody', 'thead', 'table', 'div', 'DIV', 'P', 'h1', 'br', 'img', 'script', 'SCRIPT', 'style', 'textarea', 'noscript', '</script>', '</script >',
  '</style>', '<!--', '-->', '<![CDATA[', ']]>', 'href=/x/', '<b>', '</b>', '<p>', '</div>', '<div>', '</a>', '<a href="x">', 'x', 'ü', '@', '[', '|', 'body', 'html',
  '<br/>', '<div/>', '<img src="a>b">', "<a title='x'>", '<p class=x/>', '<input value="/>"/>',
  // Names in other cases, and with characters that lowercasing changes or lengthens.
  '<Div>', '</dIV>', '<dİv>', '</DİV>', '<bÄ>', '</Bä>', '<bä>', '</BÄ>',
];

/** The article benchmark pages beside the repository, when they are there. */
function articlePages(count: number): string[] {
  const corpus = path.join(__dirname, '../../../../shared/data/article-extraction/html');
  if (!existsSync(corpus)) return [];
  return readdirSync(corpus)
    .slice(0, count)
    .map((file) => gunzipSync(readFileSync(path.join(corpus, file))).toString('utf8'));
}

describe('the pre-scan of a page as it downloads', () => {
  it('never refuses a sample or article page the whole-page scan accepts, however it is split, and reaches its depth', () => {
    const next = seeded(7);
    for (const html of [...SAMPLE_PAGES.map((page) => page.html), ...articlePages(40)]) {
      expectNeverStricter(html, next);
      const whole = scanHtml(html, UNCAPPED);
      // A complete page's last tags arrive too: the stream has seen its whole nesting.
      const result = streamed(split(html, 1500, next), UNCAPPED);
      expect(whole.ok && (result as { depth: number }).depth).to.equal(whole.ok && whole.depth);
    }
  });

  it('never refuses random markup the whole-page scan accepts: tags, quotes, comments, CDATA and raw text split across pieces', () => {
    const next = seeded(20261127);
    for (let round = 0; round < 5_000; round++) {
      let html = '';
      const atoms = 1 + Math.floor(next() * 60);
      for (let index = 0; index < atoms; index++) html += ATOMS[Math.floor(next() * ATOMS.length)];
      expectNeverStricter(html, next);
    }
  });

  it('counts tags whose names, attributes and quotes are split between pieces as one tag', () => {
    const html = `<div class="a>b" title='c'><p data-x="1"/><SCRIPT>if (a<b) x="</div>"</SCRIPT ><!-- <div> --><![CDATA[<div>]]><br/><span>x</span></div>`;
    const whole = scanHtml(html, UNCAPPED);
    for (let size = 1; size <= html.length; size++) {
      const result = streamed(split(html, size), UNCAPPED);
      expect(whole.ok && { depth: whole.depth }).to.deep.equal({ depth: (result as { depth: number }).depth });
    }
  });

  it('refuses a page nested past the depth cap within its first part, at any split', () => {
    const depth = 900_000;
    const deep = `<html><body>${'<div>'.repeat(depth)}<p>deep</p>${'</div>'.repeat(depth)}</body></html>`;
    const caps: ParseCaps = { maxChars: 10 * 1024 * 1024, maxNodes: 200_000, maxDepth: 50_000 };
    expect(scanHtml(deep, caps)).to.deep.include({ ok: false, cap: 'depth' });
    for (const size of [1_000, 16 * 1024, 64 * 1024]) {
      const scan = new StreamScan(caps);
      let read = 0;
      let refusal;
      for (const piece of split(deep, size)) {
        read += piece.length;
        refusal = scan.push(piece);
        if (refusal) break;
      }
      expect(refusal).to.deep.equal({ cap: 'depth', limit: 50_000 });
      expect(read).to.be.below(300 * 1024);
    }
    // Past the node cap and the size cap as well, before the end.
    const wide = '<p>x</p>'.repeat(300_000);
    expect(streamed(split(wide, 10_000), { ...caps, maxDepth: 50_000 })).to.deep.equal({ refused: 'nodes' });
    expect(streamed(split('x'.repeat(2_000), 100), { ...UNCAPPED, maxChars: 1_000 })).to.deep.equal({ refused: 'size' });
  });

  it('waits at a token that never ends, scanning what waits in linear time', function () {
    this.timeout(10_000);
    // An attribute quote, a comment and a script that stay open for megabytes, in small pieces.
    for (const opening of ['<div title="', '<!--', '<script>']) {
      const html = `<p>a</p>${opening}${'<div>'.repeat(1_000_000)}`;
      const result = streamed(split(html, 1024), { ...UNCAPPED, maxDepth: 50_000 });
      expect(result, opening).to.deep.equal({ nodes: 2, depth: 1 });
    }
  });
});

describe('the watch of a page as its bytes download', () => {
  const caps: ParseCaps = { maxChars: 10 * 1024 * 1024, maxNodes: 200_000, maxDepth: 50_000 };
  const deep = (prefix = ''): Buffer => Buffer.from(`${prefix}<html><body>${'<div>'.repeat(100_000)}${'</div>'.repeat(100_000)}</body></html>`);

  function watched(bytes: Buffer, size: number, options: { contentType?: string; keepBytes?: number }): { refused?: string; read: number } {
    const watch = watchPage({ caps, ...options });
    for (let at = 0; at < bytes.length; at += size) {
      const refusal = watch.push(bytes.subarray(at, at + size));
      if (refusal) return { refused: refusal.cap, read: Math.min(bytes.length, at + size) };
    }
    return { read: bytes.length };
  }

  it('refuses a deep HTML page once it has read the bytes it must keep, and reads nothing more', () => {
    const page = deep();
    expect(watched(page, 8 * 1024, { contentType: 'text/html; charset=utf-8' })).to.deep.include({ refused: 'depth' });
    expect(watched(page, 8 * 1024, { contentType: 'text/html; charset=utf-8' }).read).to.be.below(300 * 1024);
    const kept = watched(page, 8 * 1024, { contentType: 'text/html', keepBytes: 400 * 1024 });
    expect(kept.refused).to.equal('depth');
    expect(kept.read).to.be.within(400 * 1024, 408 * 1024);
    // No Content-Type: the first bytes say it is markup.
    expect(watched(page, 8 * 1024, {})).to.deep.include({ refused: 'depth' });
  });

  it('lets pass what is not HTML, documents served as HTML, and pages small enough to stop before the charset is known', () => {
    expect(watched(deep(), 8 * 1024, { contentType: 'application/json' })).to.not.have.property('refused');
    expect(watched(deep('%PDF-1.7\n'), 8 * 1024, { contentType: 'text/html' })).to.not.have.property('refused');
    expect(watched(Buffer.from('<div>'.repeat(500)), 8 * 1024, { contentType: 'text/html' })).to.not.have.property('refused');
  });

  it('decodes the charset the whole page is read with, characters split between chunks included', () => {
    // Multi-byte characters in tag names and text: a split inside one must not change a tag.
    const body = `<html><head><meta charset="shift_jis"></head><body>${'<div>日本語'.repeat(60_000)}</body></html>`;
    const bytes = iconv.encode(body, 'shift_jis');
    for (const size of [1, 7, 4096 + 3]) {
      if (size === 1) {
        // Byte by byte on a shorter page: the same counts as the whole-page scan of its decoded text.
        const short = iconv.encode(`<meta charset="shift_jis">${' '.repeat(4096)}${'<div>日本語<p>テ'.repeat(300)}`, 'shift_jis');
        const watch = watchPage({ caps: { ...caps, maxDepth: 299 }, contentType: 'text/html' });
        let refusal;
        for (let at = 0; at < short.length && !refusal; at++) refusal = watch.push(short.subarray(at, at + 1));
        expect(refusal).to.deep.equal({ cap: 'depth', limit: 299 });
        continue;
      }
      expect(watched(bytes, size, { contentType: 'text/html' })).to.deep.include({ refused: 'depth' });
    }
    // UTF-8 with a byte-order mark, and UTF-16 by its mark.
    const utf8 = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`<html>${'<div>ü'.repeat(60_000)}`)]);
    expect(watched(utf8, 999, { contentType: 'text/html; charset=windows-1252' })).to.deep.include({ refused: 'depth' });
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`<html>${'<div>'.repeat(60_000)}`, 'utf16le')]);
    expect(watched(utf16, 1001, { contentType: 'text/html' })).to.deep.include({ refused: 'depth' });
  });
});
