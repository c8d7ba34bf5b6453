/**
 * Target safety in one object: the policy (what may be reached), the override-aware resolver and the
 * connect-time lookup. The plain engine and the browser both take their checks from here, so a page
 * refused to one is refused to the other.
 */
import type { LookupFunction } from 'node:net';
import type { Config } from '../../base/config';
import { createTargetPolicy, type TargetPolicy, type TargetVerdict } from './policy';
import { createHostResolver, createSafeLookup, resolveTarget, type HostResolver, type Resolution } from './resolver';

export interface TargetGuard {
  policy: TargetPolicy;
  resolver: HostResolver;
  /** For `net.connect`/undici `connect.lookup`: resolves and refuses forbidden addresses at connect time. */
  lookup: LookupFunction;
  /** URL-level check (scheme, names, IP literals): run it on the parsed URL of every hop. */
  checkUrl(url: URL): TargetVerdict;
  /** Resolves and checks a host before it is handed to someone who resolves on their own (a proxy). */
  resolve(host: string): Promise<Resolution>;
}

export function createTargetGuard(config: Pick<Config, 'targetAllowlist' | 'hostOverrides'>): TargetGuard {
  const policy = createTargetPolicy(config.targetAllowlist);
  const resolver = createHostResolver(config.hostOverrides);
  return {
    policy,
    resolver,
    lookup: createSafeLookup(policy, resolver),
    checkUrl: (url) => policy.checkUrl(url),
    resolve: (host) => resolveTarget(host, policy, resolver),
  };
}

export { classifyAddress, isPublicAddress, type AddressCategory, type AddressVerdict } from './address';
export { bareHost, createTargetPolicy, type TargetPolicy, type TargetVerdict } from './policy';
export { createHostResolver, type HostResolver, type Resolution } from './resolver';
export { domainKeyOf, registrableDomain } from './domain';
