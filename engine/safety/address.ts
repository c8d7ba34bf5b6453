/**
 * Classifies IP address literals as public or as one of the ranges a fetch must never reach
 * (RFC 6890 special-purpose registries, plus cloud metadata endpoints). Pure: no I/O, so it is
 * unit-tested on private literals without a single packet sent.
 *
 * IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64, 6to4) are judged by the IPv4
 * address they carry: `::ffff:127.0.0.2` is loopback, not "some IPv6".
 */
import net from 'node:net';

export type AddressCategory =
  | 'public'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'shared' // carrier-grade NAT, 100.64.0.0/10
  | 'link-local'
  | 'metadata'
  | 'multicast'
  | 'broadcast'
  | 'documentation'
  | 'benchmarking'
  | 'unique-local'
  | 'reserved'
  | 'invalid';

export interface AddressVerdict {
  /** The address as judged: the embedded IPv4 address for IPv6 forms that carry one. */
  address: string;
  family: 4 | 6;
  category: AddressCategory;
}

interface Range<T> {
  base: T;
  bits: number;
  category: AddressCategory;
}

/** Most specific first: the first match wins. */
const IPV4_RANGES: Array<Range<string>> = [
  { base: '169.254.169.254', bits: 32, category: 'metadata' }, // AWS, GCP, Azure, OpenStack
  { base: '169.254.170.2', bits: 32, category: 'metadata' }, // ECS task metadata
  { base: '100.100.100.200', bits: 32, category: 'metadata' }, // Alibaba Cloud
  { base: '168.63.129.16', bits: 32, category: 'metadata' }, // Azure host endpoint (a public-looking address)
  { base: '192.0.0.192', bits: 32, category: 'metadata' }, // Oracle Cloud
  { base: '255.255.255.255', bits: 32, category: 'broadcast' },
  { base: '0.0.0.0', bits: 8, category: 'unspecified' },
  { base: '10.0.0.0', bits: 8, category: 'private' },
  { base: '100.64.0.0', bits: 10, category: 'shared' },
  { base: '127.0.0.0', bits: 8, category: 'loopback' },
  { base: '169.254.0.0', bits: 16, category: 'link-local' },
  { base: '172.16.0.0', bits: 12, category: 'private' },
  { base: '192.0.0.0', bits: 24, category: 'reserved' }, // IETF protocol assignments
  { base: '192.0.2.0', bits: 24, category: 'documentation' },
  { base: '192.88.99.0', bits: 24, category: 'reserved' }, // former 6to4 relay anycast
  { base: '192.168.0.0', bits: 16, category: 'private' },
  { base: '198.18.0.0', bits: 15, category: 'benchmarking' },
  { base: '198.51.100.0', bits: 24, category: 'documentation' },
  { base: '203.0.113.0', bits: 24, category: 'documentation' },
  { base: '224.0.0.0', bits: 4, category: 'multicast' },
  { base: '240.0.0.0', bits: 4, category: 'reserved' },
];

const IPV6_RANGES: Array<Range<string>> = [
  { base: 'fd00:ec2::254', bits: 128, category: 'metadata' }, // AWS IMDS over IPv6
  { base: '::', bits: 128, category: 'unspecified' },
  { base: '::1', bits: 128, category: 'loopback' },
  { base: '64:ff9b:1::', bits: 48, category: 'reserved' }, // local-use NAT64: translator-specific
  { base: '100::', bits: 64, category: 'reserved' }, // discard-only
  { base: '2001::', bits: 32, category: 'reserved' }, // Teredo
  { base: '2001:2::', bits: 48, category: 'benchmarking' },
  { base: '2001:10::', bits: 28, category: 'reserved' }, // ORCHID
  { base: '2001:db8::', bits: 32, category: 'documentation' },
  { base: '3fff::', bits: 20, category: 'documentation' },
  { base: 'fc00::', bits: 7, category: 'unique-local' },
  { base: 'fe80::', bits: 10, category: 'link-local' },
  { base: 'fec0::', bits: 10, category: 'reserved' }, // deprecated site-local
  { base: 'ff00::', bits: 8, category: 'multicast' },
];

export function parseIPv4(text: string): number | undefined {
  if (!net.isIPv4(text)) return undefined;
  return text.split('.').reduce((value, part) => value * 256 + Number(part), 0);
}

/** Eight 16-bit groups, or undefined when `text` is not an IPv6 literal (zone ids are refused). */
export function parseIPv6(text: string): number[] | undefined {
  if (!net.isIPv6(text) || text.includes('%')) return undefined;
  let source = text.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(source);
  if (dotted?.[1]) {
    const v4 = parseIPv4(dotted[1]) ?? 0;
    source = `${source.slice(0, -dotted[1].length)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head = '', tail] = source.split('::');
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const front = parse(head);
  const back = tail === undefined ? [] : parse(tail);
  const zeros = tail === undefined ? 0 : 8 - front.length - back.length;
  return [...front, ...new Array<number>(zeros).fill(0), ...back];
}

const ipv4Text = (value: number): string =>
  [value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff].join('.');

const inIPv4Range = (value: number, range: Range<string>): boolean => {
  const base = parseIPv4(range.base) ?? 0;
  const mask = range.bits === 0 ? 0 : (0xffffffff << (32 - range.bits)) >>> 0;
  return ((value & mask) >>> 0) === ((base & mask) >>> 0);
};

const inIPv6Range = (groups: number[], base: number[], bits: number): boolean => {
  for (let index = 0; index < 8 && bits > 0; index++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if (((groups[index] ?? 0) & mask) !== ((base[index] ?? 0) & mask)) return false;
  }
  return true;
};

/** True when `address` (a literal) lies in `cidr` (`10.0.0.0/8`, `::1`, `fd00::/8`); mapped IPv6 matches IPv4 CIDRs. */
export function inCidr(address: string, cidr: string): boolean {
  const [base = '', bitsText] = cidr.split('/');
  const v4 = parseIPv4(address) ?? embeddedIPv4(address);
  const baseV4 = parseIPv4(base);
  if (baseV4 !== undefined) {
    const bits = bitsText === undefined ? 32 : Number(bitsText);
    return v4 !== undefined && inIPv4Range(v4, { base, bits, category: 'reserved' });
  }
  const groups = parseIPv6(address);
  const baseGroups = parseIPv6(base);
  if (!groups || !baseGroups) return false;
  return inIPv6Range(groups, baseGroups, bitsText === undefined ? 128 : Number(bitsText));
}

/** The IPv4 address carried by a mapped, compatible, NAT64 (64:ff9b::/96) or 6to4 address. */
function embeddedIPv4Value(groups: number[]): number | undefined {
  const tail = (((groups[6] ?? 0) << 16) >>> 0) + (groups[7] ?? 0);
  const firstFive = groups.slice(0, 5).every((group) => group === 0);
  if (firstFive && groups[5] === 0xffff) return tail; // ::ffff:a.b.c.d
  if (firstFive && groups[5] === 0 && tail > 1) return tail; // ::a.b.c.d (deprecated "compatible")
  if (groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((group) => group === 0)) return tail;
  if (groups[0] === 0x2002) return (((groups[1] ?? 0) << 16) >>> 0) + (groups[2] ?? 0); // 6to4
  return undefined;
}

export function embeddedIPv4(address: string): number | undefined {
  const groups = parseIPv6(address);
  return groups ? embeddedIPv4Value(groups) : undefined;
}

function classifyIPv4(value: number): AddressVerdict {
  const range = IPV4_RANGES.find((candidate) => inIPv4Range(value, candidate));
  return { address: ipv4Text(value), family: 4, category: range?.category ?? 'public' };
}

/** Judges one address literal (IPv4 dotted quad or IPv6, brackets allowed). */
export function classifyAddress(literal: string): AddressVerdict {
  const text = literal.startsWith('[') && literal.endsWith(']') ? literal.slice(1, -1) : literal;
  const v4 = parseIPv4(text);
  if (v4 !== undefined) return classifyIPv4(v4);
  const groups = parseIPv6(text);
  if (!groups) return { address: text, family: 6, category: 'invalid' };
  const range = IPV6_RANGES.find((candidate) => inIPv6Range(groups, parseIPv6(candidate.base) ?? [], candidate.bits));
  if (range) return { address: text, family: 6, category: range.category };
  const embedded = embeddedIPv4Value(groups);
  if (embedded !== undefined) return classifyIPv4(embedded);
  // Only 2000::/3 is allocated as global unicast; everything else is reserved space.
  if (((groups[0] ?? 0) & 0xe000) !== 0x2000) return { address: text, family: 6, category: 'reserved' };
  return { address: text, family: 6, category: 'public' };
}

export const isPublicAddress = (literal: string): boolean => classifyAddress(literal).category === 'public';
