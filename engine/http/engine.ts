/**
 * The plain-HTTP fetch engine: validated request in, `EngineResult` out, never a throw.
 *
 *   fetch ─ validate ─ deadline ─┬─ route: direct agent ──────────────┐
 *                                └─ route: proxy (pool, session pin) ─┴─ attempt: hop → check → send
 *                                     ↑ proxy_failed: rest it, next proxy      → redirect? → read+decode
 *
 * One undici Agent serves every direct fetch (keep-alive pools per origin); each proxy has its own
 * dispatcher, kept for the life of the engine. `close()` shuts them all.
 */
import { Agent } from 'undici';
import type { Config } from '../../base/config';
import type { Logger } from '../../base/log';
import { createTargetGuard, type TargetGuard } from '../safety';
import { classifyTransportError } from './classify';
import { buildRequestHeaders } from './headers';
import { runAttempt } from './attempt';
import { HopAbort } from './transport';
import type { Hop } from './redirects';
import { createProxyPools, type Proxy, type ProxyChoiceRequest, type ProxyPools } from '../proxies/pool';
import { engineError, type EngineFailure, type EngineRequest, type EngineResult, type EngineTimeouts } from '../types';

export type EngineConfig = Pick<
  Config,
  | 'targetAllowlist'
  | 'hostOverrides'
  | 'fetchConnectTimeoutMs'
  | 'fetchHeadersTimeoutMs'
  | 'fetchBodyTimeoutMs'
  | 'fetchTotalTimeoutMs'
  | 'fetchMaxBytes'
  | 'fetchMaxRedirects'
  | 'proxies'
  | 'premiumProxies'
  | 'proxyRestMs'
  | 'proxyAttempts'
>;

export interface FetchEngine {
  fetch(request: EngineRequest, signal?: AbortSignal): Promise<EngineResult>;
  /** The target checks and name overrides, shared with the browser engine. */
  readonly guard: TargetGuard;
  /** The proxy pools (rests and session pins included), shared with the browser engine. */
  readonly proxies: ProxyPools;
  close(): Promise<void>;
}

export interface FetchEngineDeps {
  config: EngineConfig;
  log: Logger;
  /** Clock for proxy rests and session pins. */
  now?: () => number;
}

const METHODS = new Set(['GET', 'POST', 'PUT']);

export function createFetchEngine({ config, log, now }: FetchEngineDeps): FetchEngine {
  const guard = createTargetGuard(config);
  const direct = new Agent({
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 60_000,
    connections: 64,
    headersTimeout: config.fetchHeadersTimeoutMs,
    bodyTimeout: config.fetchBodyTimeoutMs,
    connect: { timeout: config.fetchConnectTimeoutMs, lookup: guard.lookup },
  });
  const pools: ProxyPools = createProxyPools({
    config,
    dispatcherOptions: {
      connectTimeoutMs: config.fetchConnectTimeoutMs,
      headersTimeoutMs: config.fetchHeadersTimeoutMs,
      bodyTimeoutMs: config.fetchBodyTimeoutMs,
    },
    ...(now ? { now } : {}),
  });
  const engineLog = log.child({ component: 'fetch-engine' });

  async function fetch(request: EngineRequest, signal?: AbortSignal): Promise<EngineResult> {
    const first = firstHop(request);
    if (!first.ok) return first;
    const timeouts: EngineTimeouts = {
      headersMs: request.timeouts?.headersMs ?? config.fetchHeadersTimeoutMs,
      bodyMs: request.timeouts?.bodyMs ?? config.fetchBodyTimeoutMs,
      totalMs: request.timeouts?.totalMs ?? config.fetchTotalTimeoutMs,
    };
    // One abort for the attempt: the deadline or the caller's (AbortSignal.any costs more per request).
    const deadline = new HopAbort();
    let deadlinePassed = false;
    const timer = setTimeout(() => {
      deadlinePassed = true;
      deadline.abort(new Error('fetch deadline'));
    }, timeouts.totalMs);
    const onCallerAbort = (): void => deadline.abort(signal?.reason);
    signal?.addEventListener('abort', onCallerAbort, { once: true });
    if (signal?.aborted) onCallerAbort();
    const tried = new Set<string>();
    const choiceRequest: ProxyChoiceRequest = {
      premium: request.premiumProxy === true,
      ...(request.proxyCountry ? { country: request.proxyCountry } : {}),
      ...(request.sessionId !== undefined ? { sessionId: request.sessionId } : {}),
      exclude: tried,
    };
    let lastFailure: EngineFailure | undefined;
    try {
      for (let attempt = 0; attempt < config.proxyAttempts; attempt++) {
        if (signal?.aborted) return engineError('aborted', 'the fetch was cancelled', { url: request.url });
        const choice = pools.choose(choiceRequest);
        if (!choice.ok) return lastFailure ?? engineError('proxy_unavailable', choice.reason, { url: request.url });
        const proxy = choice.proxy;
        const result = await runOnce(first.hop, request, proxy, timeouts, deadline, () => deadlinePassed, signal);
        if (result.ok || result.error.kind !== 'proxy_failed' || !proxy) {
          if (engineLog.enabled('debug')) engineLog.debug('fetched', outcome(request, result, proxy));
          return result;
        }
        engineLog.warn('proxy failed; resting it', { proxy: proxy.id, at: proxy.label, detail: result.error.detail });
        pools.fail(proxy, choiceRequest);
        tried.add(proxy.id);
        lastFailure = result;
      }
      return lastFailure ?? engineError('internal', 'no fetch attempt was made', { url: request.url });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onCallerAbort);
    }
  }

  async function runOnce(
    first: Hop,
    request: EngineRequest,
    proxy: Proxy | undefined,
    timeouts: EngineTimeouts,
    signal: HopAbort,
    deadlinePassed: () => boolean,
    callerSignal: AbortSignal | undefined,
  ): Promise<EngineResult> {
    const proxyInfo = proxy ? { id: proxy.id, ...(proxy.country ? { country: proxy.country } : {}) } : undefined;
    try {
      return await runAttempt(first, {
        guard,
        dispatcher: proxy ? proxy.dispatcher() : direct,
        ...(proxyInfo ? { proxy: proxyInfo } : {}),
        maxRedirects: config.fetchMaxRedirects,
        maxBytes: Math.min(request.maxBytes ?? Infinity, config.fetchMaxBytes),
        headersTimeoutMs: timeouts.headersMs,
        bodyTimeoutMs: timeouts.bodyMs,
        signal,
        ...(request.hops ? { hops: request.hops } : {}),
        ...(request.bodyCheck ? { bodyCheck: request.bodyCheck } : {}),
      });
    } catch (error) {
      const extra = { url: request.url, ...(proxyInfo ? { proxy: proxyInfo } : {}) };
      if (callerSignal?.aborted) return engineError('aborted', 'the fetch was cancelled', extra);
      if (deadlinePassed()) return engineError('timeout', `the fetch took longer than ${timeouts.totalMs} ms`, extra);
      const classified = classifyTransportError(error, { proxied: proxy !== undefined });
      if (classified.kind === 'internal') engineLog.error('unexpected fetch failure', { url: request.url, error });
      return engineError(classified.kind, classified.detail, extra);
    }
  }

  return {
    fetch,
    guard,
    proxies: pools,
    async close() {
      await Promise.allSettled([direct.close(), pools.close()]);
    },
  };
}

type FirstHop = { ok: true; hop: Hop } | EngineFailure;

function firstHop(request: EngineRequest): FirstHop {
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return engineError('invalid_request', 'url is not a valid absolute URL', { url: request.url });
  }
  const method = (request.method ?? 'GET').toUpperCase();
  if (!METHODS.has(method)) return engineError('invalid_request', `method ${method} is not fetched`, { url: request.url });
  const headers = buildRequestHeaders(request.headers);
  // Credentials in the URL become Basic auth, as browsers send them, and never travel in the URL.
  if (url.username !== '' && !headers.some(([name]) => name === 'authorization')) {
    const user = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    headers.push(['authorization', `Basic ${Buffer.from(user).toString('base64')}`]);
  }
  url.username = '';
  url.password = '';
  const body = method === 'GET' ? undefined : request.body;
  return { ok: true, hop: { url, method, headers, ...(body ? { body } : {}) } };
}

function outcome(request: EngineRequest, result: EngineResult, proxy: Proxy | undefined): Record<string, unknown> {
  const base = { url: request.url, proxy: proxy?.id };
  return result.ok
    ? { ...base, status: result.status, bytes: result.body.length, finalUrl: result.finalUrl, redirects: result.redirects.length }
    : { ...base, error: result.error.kind, detail: result.error.detail };
}
