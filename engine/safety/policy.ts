/**
 * The target policy: which URLs, host names and addresses a fetch may reach. Only public http/https;
 * `TARGET_ALLOWLIST` (addresses, CIDRs, names, `*.name`) opens private targets for development and tests.
 * Decisions are values (`TargetVerdict`), never exceptions, so every stage can report them the same way.
 */
import net from 'node:net';
import { classifyAddress, inCidr } from './address';

export type TargetVerdict = { ok: true } | { ok: false; reason: string };

export interface TargetPolicy {
  /** Scheme, credentials-free host and name rules; IP literals are judged here too (no lookup runs for them). */
  checkUrl(url: URL): TargetVerdict;
  /** One address `host` resolved to (through DNS or HOST_OVERRIDES). */
  checkAddress(host: string, address: string): TargetVerdict;
}

/** Names that reach cloud metadata services or the local machine whatever DNS says. */
const FORBIDDEN_NAMES = [
  'localhost',
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.azure.internal',
  'kubernetes.default',
];
const FORBIDDEN_SUFFIXES = ['.localhost', '.internal', '.local', '.home.arpa', '.svc.cluster.local', '.in-addr.arpa', '.ip6.arpa'];

const ALLOWED_PROTOCOLS = new Set(['http:', 'https:']);

/** URL host without brackets and without the trailing root dot, lower-cased. */
export function bareHost(url: URL): string {
  const host = url.hostname.toLowerCase();
  const unbracketed = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return unbracketed.endsWith('.') ? unbracketed.slice(0, -1) : unbracketed;
}

export const matchesName = (pattern: string, name: string): boolean =>
  pattern.startsWith('*.') ? name.endsWith(pattern.slice(1)) : name === pattern;

export function createTargetPolicy(allowlist: readonly string[]): TargetPolicy {
  const entries = allowlist.map((entry) => entry.trim().toLowerCase()).filter((entry) => entry !== '');
  const cidrs = entries.filter((entry) => net.isIP(entry.split('/')[0] ?? '') !== 0);
  const names = entries.filter((entry) => !cidrs.includes(entry)).map((name) => name.replace(/\.$/, ''));

  const nameAllowed = (host: string): boolean => names.some((pattern) => matchesName(pattern, host));
  const addressAllowed = (address: string): boolean => cidrs.some((cidr) => inCidr(address, cidr));

  const checkAddress = (host: string, address: string): TargetVerdict => {
    if (nameAllowed(host) || addressAllowed(address)) return { ok: true };
    const verdict = classifyAddress(address);
    if (verdict.category === 'public') return { ok: true };
    // The address itself stays out of the reason: callers must not learn what internal names resolve to.
    const what = `not a public address (${verdict.category})`;
    return { ok: false, reason: host === address ? `${host} is ${what}` : `${host} resolves to an address that is ${what}` };
  };

  return {
    checkAddress,
    checkUrl(url) {
      if (!ALLOWED_PROTOCOLS.has(url.protocol)) return { ok: false, reason: `only http and https targets are fetched, not ${url.protocol}` };
      const host = bareHost(url);
      if (host === '') return { ok: false, reason: 'the URL has no host' };
      if (net.isIP(host) !== 0) {
        if (host.includes('%')) return { ok: false, reason: 'scoped IPv6 addresses are not fetched' };
        return checkAddress(host, host);
      }
      if (nameAllowed(host)) return { ok: true };
      if (FORBIDDEN_NAMES.includes(host) || FORBIDDEN_SUFFIXES.some((suffix) => host.endsWith(suffix))) {
        return { ok: false, reason: `${host} is a local or metadata host name` };
      }
      // Single-label names resolve through search domains to whatever the local network calls them.
      if (!host.includes('.')) return { ok: false, reason: `${host} is not a public host name` };
      return { ok: true };
    },
  };
}
