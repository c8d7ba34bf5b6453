import { expect } from 'chai';
import { maskLine, snapshotOf } from '../../../engine/changes';
import { MAX_VALUES } from '../../../engine/changes/writer';

/** The key with placeholders spelled `<class>`, and the kinds masked, in order. */
function masked(line: string): { key: string; kinds: string[]; values: string[] } {
  const { key, values } = maskLine(line);
  return { key: key.replace(/\ue000/g, '<').replace(/\ue001/g, '>'), kinds: values.map((v) => v.kind), values: values.map((v) => v.value) };
}

describe('change tracking: volatile runs of page text', () => {
  it('masks dates and times in the usual formats', () => {
    const lines = [
      'Page generated at 2024-05-06T15:45:12Z',
      'Page generated at 2024-05-06T15:45:12.123+02:00',
      'Generated Mon, 06 May 2024 15:45:12 GMT',
      'Built on May 6, 2024 at 3:45 PM',
      'Rendered 06/05/2024 15:45:12',
      'Updated 6 May 2024, 15:45',
      'Server time 6.5.2024 15:45:12 CET',
      'Generated: 2024-05-06 15:45:12 UTC',
      'Last updated 5 minutes ago',
      'Posted 3h ago',
      'Edited just now',
      'Snapshot 1714567890',
      'Snapshot 1714567890123',
      'Monday, 6 May 2024',
      'Sept. 6th, 2024',
    ];
    for (const line of lines) {
      const { key, kinds } = masked(line);
      expect(kinds, line).to.deep.equal(['timestamp']);
      expect(key, line).to.match(/<time>$/);
    }
  });

  it('masks random identifiers whatever they look like, under one placeholder', () => {
    const cases: Array<[string, string]> = [
      ['Request 8f3a9c2e-11ee-4b7b-9c1d-aa00bb11cc22 done', 'uuid'],
      ['Trace 4f2a1c9b8e7d6a5f4e3d2c1b0a9f8e7d', 'hex'],
      ['Trace 1234567890123456', 'hex'],
      ['Key aZ3k9Qm2LpX8vB1nR4tY7uI0oP', 'token'],
      ['Reference req_7ad954785676afcb', 'token'],
      ['Reference req_00d6cf5213415a7a', 'token'],
    ];
    for (const [line, kind] of cases) {
      const { key, kinds } = masked(line);
      expect(kinds, line).to.deep.equal([kind]);
      expect(key, line).to.match(/ <id>( done)?$/);
    }
    // A hex id, a token and a prefixed id are one placeholder: the slot compares equal whatever the draw.
    expect(masked('Reference req_7ad954785676afcb').key).to.equal(masked('Reference req_00d6cf5213415a7a').key);
  });

  it('masks the value of a per-request label even when it looks like a word', () => {
    expect(masked('Request ID: abc').key).to.equal('Request ID: <id>');
    expect(masked('Ray ID 7d3f2a1b9c8e4f10-FRA').key).to.equal('Ray ID <id>');
    expect(masked('Served by web-12').key).to.equal('Served by <id>');
    expect(masked('Server: node-3').key).to.equal('Server: <id>');
    expect(masked('nonce=LLuNfPZoqepZSIHQTApaHGUU').key).to.equal('nonce=<id>');
    // A label word is never the value of another label.
    expect(masked('CSRF token: x9Kq2mZ8pL4vB7nR3tY6').key).to.equal('CSRF token: <id>');
    expect(masked('The server 12 times').key).to.equal('The server 12 times');
  });

  it('masks traffic counters and generation times, not other numbers', () => {
    expect(masked('1,234 views').key).to.equal('<count> views');
    expect(masked('Viewed 1,234 times').key).to.equal('Viewed <count> times');
    expect(masked('37 users online').key).to.equal('<count> users online');
    expect(masked('Visitors: 12').key).to.equal('Visitors: <count>');
    expect(masked('Online now: 569').key).to.equal('Online now: <count>');
    expect(masked('12.5k reads').key).to.equal('<count> reads');
    expect(masked('Page generated at 2024-05-06T15:45:12Z in 0.123 s').key).to.equal('Page generated at <time> in <duration> s');
    expect(masked('Rendered in 45ms').key).to.equal('Rendered in <duration>ms');
    expect(masked('Query took 12 ms').key).to.equal('Query took <duration> ms');
    for (const line of ['Price: $1,299.00', 'Only 5 left in stock', 'Version 1.2.3', 'Call 555-123-4567', 'Ships in 2 days', '12 reviews', 'Room 101, 12 Main St.']) {
      expect(masked(line).key, line).to.equal(line);
    }
  });

  it('leaves names, slugs and code identifiers alone', () => {
    for (const line of [
      'getElementsByTagNameNS and querySelectorAll',
      'iPhone15ProMax256GB in stock',
      'covid-19-vaccine-rollout-2024',
      'ISO9001Certified supplier',
      'RTX4090FoundersEdition',
      'internationalization',
      'top10products2024',
      'Copyright 2024',
      'March 2024 archive',
    ]) {
      expect(masked(line).kinds, line).to.deep.equal([]);
    }
  });

  it('compares link targets and image sources without tracking, session and cache-busting parts', () => {
    const a = masked('[Cart](https://shop.example/cart?sid=abc123&utm_source=nav&page=2) ![Logo](https://cdn.example/logo.3f9a8c2b.png?v=1714567890)');
    const b = masked('[Cart](https://shop.example/cart?utm_medium=x&page=2&gclid=zz) ![Logo](https://cdn.example/logo.00796241.png?v=1714999999)');
    expect(a.key).to.equal(b.key);
    expect(a.key).to.equal('[Cart](https://shop.example/cart?page=2) ![Logo](https://cdn.example/logo.<id>.png?v=<buster>)');
    expect(a.kinds).to.include.members(['tracking', 'cache_buster', 'hex']);
    // Where a link points still counts.
    expect(masked('[Guide](https://x.example/guides/a-1)').key).to.not.equal(masked('[Guide](https://x.example/guides/a-2)').key);
    expect(masked('[Out](https://x.example/logout?token=Zm9vYmFyYmF6cXV4MTIz)').key).to.equal('[Out](https://x.example/logout?token=<id>)');
    expect(masked('[a](https://x.example/p;jsessionid=1A2B3C4D5E6F)').key).to.equal('[a](https://x.example/p)');
  });

  it('masks bare URLs in text the same way', () => {
    expect(masked('See https://x.example/a?utm_source=mail&id=3.').key).to.equal('See https://x.example/a?id=3.');
  });

  it('keeps the masked values aside, as written', () => {
    expect(masked('Request ID: 8f3a9c2e-11ee-4b7b-9c1d-aa00bb11cc22 at 2024-05-06T15:45:12Z').values).to.deep.equal([
      '8f3a9c2e-11ee-4b7b-9c1d-aa00bb11cc22',
      '2024-05-06T15:45:12Z',
    ]);
  });

  it('reads hostile lines to the end and gives a key for each', () => {
    const unclosed = '](x'.repeat(50_000);
    expect(maskLine(unclosed).key).to.equal(unclosed);
    const joined = 'a-'.repeat(100_000);
    expect(maskLine(joined).key).to.equal(joined);
    const digits = '1:2'.repeat(50_000);
    expect(maskLine(digits).key.length).to.be.greaterThan(0);
    const months = 'May '.repeat(50_000);
    expect(maskLine(months).key).to.equal(months);
  });

  it('keeps a bounded number of masked runs per page, and masks the rest all the same', () => {
    const clocks = Array.from({ length: 2_000 }, () => '10:21 '.repeat(50)).join('\n');
    const snapshot = snapshotOf(clocks);
    expect(snapshot.values.reduce((sum, values) => sum + values.length, 0)).to.equal(MAX_VALUES);
    expect(snapshot.keys[snapshot.keys.length - 1]).to.equal('\ue000time\ue001 '.repeat(49) + '\ue000time\ue001');
  });
});
