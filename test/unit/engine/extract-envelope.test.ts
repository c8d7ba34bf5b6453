import { expect } from 'chai';
import { extractEnvelope } from '../../../engine/extract';
import { acmeHomes } from '../../fixtures/extract-sites/sites';

const PARSED = { price: 350000, title: 'A "quoted" \\ title', items: [{ url: 'http://acme-homes.test/p/1' }] };

/** What the envelope must equal byte for byte: the page as its decoded text, through JSON.stringify. */
const expected = (bytes: Buffer): Buffer => Buffer.from(JSON.stringify({ parsed: PARSED, html: new TextDecoder('utf-8').decode(bytes) }));

describe('the extract envelope', () => {
  const pages: Array<[string, Buffer]> = [
    ['every character JSON escapes', Buffer.from(`quote " backslash \\ ${Array.from({ length: 32 }, (_, code) => String.fromCharCode(code)).join('')} del \u007f`)],
    ['characters JSON leaves alone', Buffer.from('é € 😀 \u2028 \u2029 </script> \u00a0')],
    ['a byte-order mark, dropped as decoding drops it', Buffer.from('\ufeff<html><body>x</body></html>')],
    ['a page of quotes only (the buffer grows)', Buffer.from('"'.repeat(50_000))],
    ['an empty page', Buffer.alloc(0)],
    ...[...acmeHomes(2).pages.values()].map((page): [string, Buffer] => [`the generated page ${page.path}`, Buffer.from(page.html)]),
  ];
  for (const [name, bytes] of pages) {
    it(`writes ${name} exactly as JSON.stringify would`, () => {
      const html = new TextDecoder('utf-8').decode(bytes);
      expect(extractEnvelope(PARSED, html, { bytes, utf8: true }).equals(expected(bytes))).to.equal(true);
      expect(extractEnvelope(PARSED, html).equals(expected(bytes))).to.equal(true);
    });
  }

  it('falls back to the decoded text when the bytes are not valid UTF-8', () => {
    const bytes = Buffer.from([0x3c, 0x70, 0x3e, 0xff, 0xfe, 0x41, 0xc3]);
    const html = new TextDecoder('utf-8').decode(bytes);
    expect(JSON.parse(extractEnvelope(PARSED, html, { bytes, utf8: true }).toString('utf8'))).to.deep.equal({ parsed: PARSED, html });
  });

  it('uses the decoded text when the page was read in another charset', () => {
    const bytes = Buffer.from([0x63, 0x61, 0x66, 0xe9]); // "café" in windows-1252
    expect(JSON.parse(extractEnvelope(PARSED, 'café', { bytes, utf8: false }).toString('utf8'))).to.deep.equal({ parsed: PARSED, html: 'café' });
  });
});
