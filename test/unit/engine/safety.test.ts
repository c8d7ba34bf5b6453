/**
 * Target safety without a single packet: the address classifier on private, reserved and metadata
 * literals, the URL policy on every spelling of an address, the allow-list and the override resolver.
 */
import { expect } from 'chai';
import { classifyAddress, createHostResolver, createTargetGuard, createTargetPolicy } from '../../../engine/safety';
import { loadConfig } from '../../../base/config';

describe('engine target safety (no network)', () => {
  describe('address classifier', () => {
    const cases: Array<[string, string, string?]> = [
      ['8.8.8.8', 'public'],
      ['1.1.1.1', 'public'],
      ['172.32.0.1', 'public'],
      ['100.128.0.1', 'public'],
      ['10.1.2.3', 'private'],
      ['172.16.0.1', 'private'],
      ['172.31.255.255', 'private'],
      ['192.168.1.1', 'private'],
      ['127.0.0.1', 'loopback'],
      ['127.255.255.254', 'loopback'],
      ['169.254.1.1', 'link-local'],
      ['169.254.169.254', 'metadata'],
      ['169.254.170.2', 'metadata'],
      ['100.100.100.200', 'metadata'],
      ['168.63.129.16', 'metadata'],
      ['100.64.0.1', 'shared'],
      ['100.127.255.255', 'shared'],
      ['0.0.0.0', 'unspecified'],
      ['0.1.2.3', 'unspecified'],
      ['224.0.0.1', 'multicast'],
      ['239.255.255.250', 'multicast'],
      ['255.255.255.255', 'broadcast'],
      ['240.0.0.1', 'reserved'],
      ['192.0.0.8', 'reserved'],
      ['192.0.2.1', 'documentation'],
      ['203.0.113.9', 'documentation'],
      ['198.18.0.1', 'benchmarking'],
      ['2606:4700:4700::1111', 'public'],
      ['2001:4860:4860::8888', 'public'],
      ['::1', 'loopback'],
      ['::', 'unspecified'],
      ['fe80::1', 'link-local'],
      ['febf:ffff::1', 'link-local'],
      ['fc00::1', 'unique-local'],
      ['fd12:3456::1', 'unique-local'],
      ['fd00:ec2::254', 'metadata'],
      ['ff02::1', 'multicast'],
      ['fec0::1', 'reserved'],
      ['4000::1', 'reserved'],
      ['100::1', 'reserved'],
      ['2001::1', 'reserved'],
      ['2001:db8::1', 'documentation'],
      ['64:ff9b:1::1', 'reserved'],
      ['::ffff:127.0.0.2', 'loopback', '127.0.0.2'],
      ['::ffff:7f00:2', 'loopback', '127.0.0.2'],
      ['[::ffff:7f00:2]', 'loopback', '127.0.0.2'],
      ['0:0:0:0:0:ffff:10.0.0.1', 'private', '10.0.0.1'],
      ['::ffff:169.254.169.254', 'metadata', '169.254.169.254'],
      ['::ffff:8.8.8.8', 'public', '8.8.8.8'],
      ['::127.0.0.1', 'loopback', '127.0.0.1'],
      ['64:ff9b::10.0.0.1', 'private', '10.0.0.1'],
      ['64:ff9b::a9fe:a9fe', 'metadata', '169.254.169.254'],
      ['64:ff9b::8.8.8.8', 'public', '8.8.8.8'],
      ['2002:c0a8:0101::1', 'private', '192.168.1.1'],
      ['2002:0808:0808::1', 'public', '8.8.8.8'],
      ['fe80::1%eth0', 'invalid'],
      ['not-an-address', 'invalid'],
    ];
    for (const [literal, category, embedded] of cases) {
      it(`classifies ${literal} as ${category}`, () => {
        const verdict = classifyAddress(literal);
        expect(verdict.category).to.equal(category);
        if (embedded) expect(verdict.address).to.equal(embedded);
      });
    }
  });

  describe('URL policy', () => {
    const policy = createTargetPolicy(['127.0.0.1', '::1', 'localhost']);
    const refused = [
      'http://127.0.0.2/',
      'http://2130706434/', // decimal 127.0.0.2
      'http://0x7f000002/', // hexadecimal
      'http://0177.0.0.2/', // octal
      'http://127.2/', // short form
      'http://0x7f.0.0.2/',
      'http://[::ffff:127.0.0.2]/',
      'http://[0:0:0:0:0:ffff:7f00:2]/',
      'http://[::ffff:a9fe:a9fe]/',
      'http://169.254.169.254/latest/meta-data/',
      'http://2852039166/', // decimal 169.254.169.254
      'http://10.0.0.1/',
      'http://0/',
      'http://[fd00:ec2::254]/',
      'http://[fe80::1]/',
      'http://metadata.google.internal/computeMetadata/v1/',
      'http://METADATA.GOOGLE.INTERNAL./',
      'http://metadata/',
      'http://printer.local/',
      'http://app.localhost/',
      'http://intranet/',
      'ftp://example.com/',
      'file:///etc/passwd',
      'gopher://example.com/',
    ];
    for (const url of refused) {
      it(`refuses ${url}`, () => expect(policy.checkUrl(new URL(url)).ok).to.equal(false));
    }
    const allowed = ['http://example.com/', 'https://example.com:8443/x', 'http://8.8.8.8/', 'http://127.0.0.1:9/', 'http://localhost./', 'http://[::1]:9/'];
    for (const url of allowed) {
      it(`allows ${url}`, () => expect(policy.checkUrl(new URL(url)).ok).to.equal(true));
    }

    it('says what is wrong without naming the address a name resolved to', () => {
      const verdict = policy.checkAddress('intranet.example', '10.1.2.3');
      expect(verdict).to.deep.equal({ ok: false, reason: 'intranet.example resolves to an address that is not a public address (private)' });
    });

    it('opens CIDRs and name patterns of the allow-list, and only those', () => {
      const open = createTargetPolicy(['10.0.0.0/8', '*.corp.example', 'fd00::/8']);
      expect(open.checkUrl(new URL('http://10.9.8.7/')).ok).to.equal(true);
      expect(open.checkUrl(new URL('http://[::ffff:10.9.8.7]/')).ok).to.equal(true);
      expect(open.checkUrl(new URL('http://11.0.0.1/')).ok).to.equal(true);
      expect(open.checkUrl(new URL('http://192.168.0.1/')).ok).to.equal(false);
      expect(open.checkUrl(new URL('http://[fd12::1]/')).ok).to.equal(true);
      expect(open.checkAddress('db.corp.example', '192.168.0.5').ok).to.equal(true);
      expect(open.checkAddress('corp.example.evil.test', '192.168.0.5').ok).to.equal(false);
    });
  });

  describe('host overrides', () => {
    it('prefers exact names over wildcards and the longest wildcard over shorter ones', () => {
      const resolver = createHostResolver([
        { pattern: '*.shop.test', address: '127.0.0.1' },
        { pattern: '*.eu.shop.test', address: '127.0.0.3' },
        { pattern: 'admin.eu.shop.test', address: '127.0.0.4' },
      ]);
      expect(resolver.override('www.shop.test')).to.equal('127.0.0.1');
      expect(resolver.override('www.eu.shop.test')).to.equal('127.0.0.3');
      expect(resolver.override('ADMIN.eu.shop.test.')).to.equal('127.0.0.4');
      expect(resolver.override('shop.test')).to.equal(undefined);
    });

    it('builds Chromium host-resolver rules for the same names', () => {
      const resolver = createHostResolver([
        { pattern: '*.shop.test', address: '127.0.0.1' },
        { pattern: 'shop.test', address: '127.0.0.1' },
        { pattern: 'v6.test', address: '::1' },
      ]);
      expect(resolver.chromiumRules()).to.equal('MAP shop.test 127.0.0.1, MAP v6.test [::1], MAP *.shop.test 127.0.0.1');
    });

    it('checks override addresses in the connect-time lookup', async () => {
      const guard = createTargetGuard(
        loadConfig({ TARGET_ALLOWLIST: '127.0.0.1', HOST_OVERRIDES: 'ok.test=127.0.0.1,evil.test=127.0.0.2,meta.test=169.254.169.254' }),
      );
      const lookup = (host: string, all: boolean): Promise<{ error: NodeJS.ErrnoException | null; result: unknown }> =>
        new Promise((resolve) => {
          guard.lookup(host, { all }, (error, address, family) => resolve({ error, result: all ? address : { address, family } }));
        });
      expect(await lookup('ok.test', false)).to.deep.equal({ error: null, result: { address: '127.0.0.1', family: 4 } });
      expect(await lookup('ok.test', true)).to.deep.equal({ error: null, result: [{ address: '127.0.0.1', family: 4 }] });
      for (const host of ['evil.test', 'meta.test']) {
        const { error } = await lookup(host, true);
        expect(error?.code, host).to.equal('ERR_TARGET_FORBIDDEN');
      }
    });
  });
});
