/**
 * Name resolution for fetches: `HOST_OVERRIDES` first (names mapped to addresses without DNS), then DNS.
 * `createSafeLookup` is the `lookup` of every direct connection, so the address checked is the address
 * connected to: a name that resolves to a private address is refused at connect time, with no window
 * for DNS rebinding between a check and the connection.
 */
import dns from 'node:dns';
import net, { type LookupFunction } from 'node:net';
import { matchesName, type TargetPolicy } from './policy';

export interface HostOverride {
  pattern: string;
  address: string;
}

export interface HostResolver {
  /** The override address for `host`, if one is configured. Exact names win over `*.` patterns. */
  override(host: string): string | undefined;
  /** Chromium `--host-resolver-rules` value mapping the same names (empty when there are none). */
  chromiumRules(): string;
}

export function createHostResolver(overrides: readonly HostOverride[]): HostResolver {
  // Exact names first, then wildcards from the longest (most specific) suffix down.
  const ordered = [...overrides].sort((a, b) => {
    const wild = Number(a.pattern.startsWith('*.')) - Number(b.pattern.startsWith('*.'));
    return wild !== 0 ? wild : b.pattern.length - a.pattern.length;
  });
  return {
    override(host) {
      const name = host.toLowerCase().replace(/\.$/, '');
      return ordered.find((entry) => matchesName(entry.pattern, name))?.address;
    },
    chromiumRules() {
      return ordered
        .map(({ pattern, address }) => `MAP ${pattern} ${net.isIPv6(address) ? `[${address}]` : address}`)
        .join(', ');
    },
  };
}

/** The error a refused lookup fails the connection with; `code` is what the engine branches on. */
export interface TargetForbiddenError extends Error {
  code: 'ERR_TARGET_FORBIDDEN';
}

export const targetForbidden = (reason: string): TargetForbiddenError =>
  Object.assign(new Error(reason), { code: 'ERR_TARGET_FORBIDDEN' as const });

export interface ResolvedAddress {
  address: string;
  family: number;
}

export type Resolution =
  | { ok: true; addresses: ResolvedAddress[]; overridden: boolean }
  | { ok: false; kind: 'target_forbidden' | 'dns_failed'; reason: string };

/** Resolves `host` and checks every address; one forbidden address refuses the whole name. */
export async function resolveTarget(host: string, policy: TargetPolicy, resolver: HostResolver, family = 0): Promise<Resolution> {
  const overridden = resolver.override(host);
  let addresses: ResolvedAddress[];
  if (overridden !== undefined) {
    addresses = [{ address: overridden, family: net.isIP(overridden) }];
  } else if (net.isIP(host) !== 0) {
    addresses = [{ address: host, family: net.isIP(host) }];
  } else {
    try {
      addresses = await dns.promises.lookup(host, { all: true, family, verbatim: true });
    } catch (error) {
      return { ok: false, kind: 'dns_failed', reason: `${host} could not be resolved (${(error as NodeJS.ErrnoException).code ?? 'error'})` };
    }
    if (addresses.length === 0) return { ok: false, kind: 'dns_failed', reason: `${host} has no address` };
  }
  for (const { address } of addresses) {
    const verdict = policy.checkAddress(host, address);
    if (!verdict.ok) return { ok: false, kind: 'target_forbidden', reason: verdict.reason };
  }
  return { ok: true, addresses, overridden: overridden !== undefined };
}

/** A `net.connect` lookup that resolves through overrides and DNS and refuses forbidden addresses. */
export function createSafeLookup(policy: TargetPolicy, resolver: HostResolver): LookupFunction {
  return (hostname, options, callback) => {
    const family = typeof options.family === 'number' ? options.family : 0;
    resolveTarget(hostname, policy, resolver, family).then(
      (resolution) => {
        if (!resolution.ok) {
          const error =
            resolution.kind === 'target_forbidden'
              ? targetForbidden(resolution.reason)
              : Object.assign(new Error(resolution.reason), { code: 'ENOTFOUND', hostname });
          callback(error, '', 0);
          return;
        }
        const picked = family === 0 ? resolution.addresses : resolution.addresses.filter((entry) => entry.family === family);
        if (options.all) {
          (callback as unknown as (error: null, addresses: ResolvedAddress[]) => void)(null, picked);
          return;
        }
        const first = picked[0];
        if (!first) callback(Object.assign(new Error(`${hostname} has no IPv${family} address`), { code: 'ENOTFOUND' }), '', 0);
        else callback(null, first.address, first.family);
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, '', 0),
    );
  };
}
