/**
 * The registrable domain of a host: the one rule crawls (scope), escalation (rung memory) and Extract
 * (recipes, prepared-domain records) share. The public suffix list counts its private section too, so
 * `alice.github.io` and `bob.github.io` are two sites, as their owners are two, and `shop.example.co.uk`
 * is `example.co.uk`. IP addresses, single labels and unknown suffixes have none.
 */
import net from 'node:net';
import { getDomain } from 'tldts';

export function registrableDomain(hostname: string): string | null {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (host === '' || net.isIP(host) !== 0) return null;
  return getDomain(host, { allowPrivateDomains: true });
}

/** What a host is keyed by when it has no registrable domain (an IP address, a single label): itself. */
export const domainKeyOf = (hostname: string): string => registrableDomain(hostname) ?? hostname.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
