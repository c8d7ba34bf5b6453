/**
 * One attempt of a fetch over one route (direct, or one proxy): hop after hop, every hop checked
 * before anything is sent, redirects followed up to the limit, the final body read and decoded.
 *
 * Direct hops: the URL check runs here (IP literals never reach a DNS lookup) and the address check
 * runs at connect time in the dispatcher's `lookup`. Proxied hops: the target is resolved and checked
 * here, then handed to the proxy by name, and the proxy resolves it again on its own. What remains is
 * a rebinding window on the proxy's side (a name answering public to us and private to the proxy),
 * which reaches the proxy's network, not ours. Override names (local development and tests) go to the
 * proxy as their checked address with the name in Host; through SOCKS5, undici then uses that address
 * as the TLS server name too, so https to an override name via SOCKS5 verifies against the address.
 */
import net from 'node:net';
import type { Dispatcher } from 'undici';
import type { TargetGuard } from '../safety';
import { bareHost } from '../safety';
import { engineError, type BodyCheck, type EngineProxyInfo, type EngineResult, type HopGate } from '../types';
import { headerValue } from './headers';
import { nextHop, type Hop } from './redirects';
import { sendHop, type HopAbort } from './transport';

export interface AttemptOptions {
  guard: TargetGuard;
  dispatcher: Dispatcher;
  proxy?: EngineProxyInfo;
  maxRedirects: number;
  maxBytes: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  signal: HopAbort;
  /** Each hop's turn at its host (the installation's host gate), its answer handed back. */
  hops?: HopGate;
  /** Watches the final answer's body as it is read. */
  bodyCheck?: BodyCheck;
}

/** Thrown errors (network, aborts) propagate to the engine, which classifies them. */
export async function runAttempt(first: Hop, options: AttemptOptions): Promise<EngineResult> {
  const redirects: string[] = [];
  const proxyField = options.proxy ? { proxy: options.proxy } : {};
  let hop = first;
  for (;;) {
    const origin = await connectOrigin(hop.url, options);
    if (!origin.ok) return engineError(origin.kind, origin.reason, { url: hop.url.href, ...proxyField });
    // Each hop waits for its own host's turn, and its answer (a 429 at the end of a chain included) counts for that host only.
    const turn = options.hops ? await options.hops.enter(hop.url) : undefined;
    if (turn && !turn.ok) return turn;
    let answer: { status: number; headers: Array<[string, string]> } | undefined;
    try {
      const response = await sendHop({
        url: hop.url,
        origin: origin.value,
        method: hop.method,
        headers: hop.headers,
        ...(hop.body ? { body: hop.body } : {}),
        dispatcher: options.dispatcher,
        headersTimeoutMs: options.headersTimeoutMs,
        bodyTimeoutMs: options.bodyTimeoutMs,
        signal: options.signal,
      });
      answer = { status: response.status, headers: response.headers };

      const next = nextHop(hop, response.status, headerValue(response.headers, 'location'));
      if (next !== undefined) {
        await response.discard();
        if (!next.ok) return engineError('protocol_error', next.detail, { url: hop.url.href, ...proxyField });
        if (redirects.length >= options.maxRedirects) {
          return engineError('too_many_redirects', `more than ${options.maxRedirects} redirects`, { url: hop.url.href, ...proxyField });
        }
        redirects.push(hop.url.href);
        hop = next.hop;
        continue;
      }

      const contentType = headerValue(response.headers, 'content-type');
      const watch = options.bodyCheck?.start({ status: response.status, ...(contentType !== undefined ? { contentType } : {}) });
      const body = await response.read(options.maxBytes, watch);
      if (!body.ok) return engineError(body.kind, body.detail, { url: hop.url.href, ...proxyField });
      return {
        ok: true,
        status: response.status,
        headers: response.headers,
        body: body.body,
        ...(contentType !== undefined ? { contentType } : {}),
        ...(body.refused ? { refused: body.refused } : {}),
        finalUrl: hop.url.href,
        redirects,
        ...proxyField,
      };
    } finally {
      turn?.done(answer);
    }
  }
}

type OriginResult = { ok: true; value: string } | { ok: false; kind: 'target_forbidden' | 'dns_failed'; reason: string };

async function connectOrigin(url: URL, options: AttemptOptions): Promise<OriginResult> {
  const verdict = options.guard.checkUrl(url);
  if (!verdict.ok) return { ok: false, kind: 'target_forbidden', reason: verdict.reason };
  if (!options.proxy) return { ok: true, value: url.origin };
  const resolution = await options.guard.resolve(bareHost(url));
  if (!resolution.ok) return { ok: false, kind: resolution.kind, reason: resolution.reason };
  const address = resolution.addresses[0]?.address;
  if (!resolution.overridden || address === undefined) return { ok: true, value: url.origin };
  const host = net.isIPv6(address) ? `[${address}]` : address;
  return { ok: true, value: `${url.protocol}//${host}${url.port ? `:${url.port}` : ''}` };
}
