/**
 * The proxy pools (plain and premium) and the choice of a proxy for one attempt: filter by pool and
 * country, prefer the session's pinned proxy, skip rested proxies, rotate among the rest. A proxy that
 * failed is rested for `PROXY_REST_MS`; when every candidate rests, the one whose rest ends first is
 * tried rather than failing outright (a single-proxy pool must not go dark for a whole rest period).
 */
import type { Dispatcher } from 'undici';
import type { Config, ProxyEntry } from '../../base/config';
import { createSessionPins } from './sessions';
import { createProxyDispatcher, proxyLabel, type ProxyDispatcherOptions } from './dispatchers';

export type PoolName = 'plain' | 'premium';

export interface Proxy {
  id: string;
  pool: PoolName;
  country?: string;
  /** Scheme and host:port, no credentials: what logs show. */
  label: string;
  /** The configured URL, credentials included (for the browser's proxy settings); never log it. */
  url: string;
  dispatcher(): Dispatcher;
}

export interface ProxyChoiceRequest {
  premium: boolean;
  country?: string;
  sessionId?: string | number;
  /** Proxies already tried by this fetch. */
  exclude: ReadonlySet<string>;
}

export type ProxyChoice =
  | { ok: true; proxy: Proxy | undefined } // undefined: go direct (plain request, empty plain pool)
  | { ok: false; reason: string; exhausted: boolean };

export interface ProxyPools {
  choose(request: ProxyChoiceRequest): ProxyChoice;
  /** The proxy failed (refused, timed out, rejected the tunnel): rest it and drop session pins to it. */
  fail(proxy: Proxy, request: ProxyChoiceRequest): void;
  /** Whether the fetch would go through a proxy at all. */
  uses(request: Pick<ProxyChoiceRequest, 'premium'>): boolean;
  close(): Promise<void>;
}

interface Entry extends Proxy {
  restedUntil: number;
}

export interface ProxyPoolOptions {
  config: Pick<Config, 'proxies' | 'premiumProxies' | 'proxyRestMs'>;
  dispatcherOptions: ProxyDispatcherOptions;
  now?: () => number;
  /** Builds a proxy's dispatcher; tests of the choice logic pass a stub that opens nothing. */
  createDispatcher?: (url: string, options: ProxyDispatcherOptions) => Dispatcher;
}

export function createProxyPools(options: ProxyPoolOptions): ProxyPools {
  const now = options.now ?? Date.now;
  const build = options.createDispatcher ?? createProxyDispatcher;
  const created = new Map<string, Dispatcher>();
  const entries = (pool: PoolName, list: readonly ProxyEntry[]): Entry[] =>
    list.map((item, index) => {
      const id = `${pool}-${index + 1}`;
      return {
        id,
        pool,
        ...(item.country ? { country: item.country } : {}),
        label: proxyLabel(item.url),
        url: item.url,
        restedUntil: 0,
        dispatcher: () => {
          let dispatcher = created.get(id);
          if (!dispatcher) created.set(id, (dispatcher = build(item.url, options.dispatcherOptions)));
          return dispatcher;
        },
      };
    });
  const pools: Record<PoolName, Entry[]> = {
    plain: entries('plain', options.config.proxies),
    premium: entries('premium', options.config.premiumProxies),
  };
  const pins = createSessionPins({ now });
  const cursors: Record<PoolName, number> = { plain: 0, premium: 0 };

  const poolOf = (request: Pick<ProxyChoiceRequest, 'premium'>): PoolName => (request.premium ? 'premium' : 'plain');
  const sessionKey = (request: ProxyChoiceRequest): string | undefined =>
    request.sessionId === undefined
      ? undefined
      : `${poolOf(request)}|${(request.premium && request.country?.toLowerCase()) || '*'}|${String(request.sessionId)}`;

  return {
    uses: (request) => pools[poolOf(request)].length > 0,

    choose(request) {
      const name = poolOf(request);
      const pool = pools[name];
      if (pool.length === 0) {
        return name === 'plain' ? { ok: true, proxy: undefined } : { ok: false, reason: 'no premium proxies are configured', exhausted: false };
      }
      // Countries select residential exits; the plain pool is one rotation whatever the country.
      const country = name === 'premium' ? request.country?.toLowerCase() : undefined;
      const matching = country === undefined ? pool : pool.filter((entry) => entry.country === country);
      if (matching.length === 0) return { ok: false, reason: `no ${name} proxy for country "${country}"`, exhausted: false };
      const candidates = matching.filter((entry) => !request.exclude.has(entry.id));
      if (candidates.length === 0) return { ok: false, reason: `every ${name} proxy tried failed`, exhausted: true };

      const key = sessionKey(request);
      const pinned = key === undefined ? undefined : candidates.find((entry) => entry.id === pins.get(key));
      const at = now();
      let chosen = pinned && pinned.restedUntil <= at ? pinned : undefined;
      if (!chosen) {
        const awake = candidates.filter((entry) => entry.restedUntil <= at);
        if (awake.length > 0) chosen = awake[cursors[name]++ % awake.length];
        else chosen = candidates.reduce((best, entry) => (entry.restedUntil < best.restedUntil ? entry : best));
      }
      if (key !== undefined && chosen && chosen.id !== pins.get(key)) pins.set(key, chosen.id);
      return { ok: true, proxy: chosen };
    },

    fail(proxy, request) {
      const entry = pools[proxy.pool].find((candidate) => candidate.id === proxy.id);
      if (entry) entry.restedUntil = now() + options.config.proxyRestMs;
      const key = sessionKey(request);
      if (key !== undefined) pins.release(key, proxy.id);
    },

    async close() {
      const dispatchers = [...created.values()];
      created.clear();
      await Promise.allSettled(dispatchers.map((dispatcher) => dispatcher.close()));
    },
  };
}
