/**
 * One undici dispatcher per proxy, created on first use and kept: connections to targets through the
 * proxy are pooled and reused like direct ones.
 *
 * HTTP(S) proxies are always used through CONNECT tunnels, for http targets too: inside a tunnel the
 * target's own 5xx reaches us untouched, so a non-200 answer to CONNECT is always the proxy's, and a
 * failing proxy can be told from a failing target.
 */
import { ProxyAgent, Socks5ProxyAgent, buildConnector, type Dispatcher } from 'undici';

export interface ProxyDispatcherOptions {
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
}

const KEEP_ALIVE = { keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 };

export function createProxyDispatcher(proxyUrl: string, options: ProxyDispatcherOptions): Dispatcher {
  const url = new URL(proxyUrl);
  const timeouts = { headersTimeout: options.headersTimeoutMs, bodyTimeout: options.bodyTimeoutMs };
  if (url.protocol === 'socks5:' || url.protocol === 'socks:') {
    // Its per-target pools take no options of their own: timeouts come with each request.
    return new Socks5ProxyAgent(url, { connect: buildConnector({ timeout: options.connectTimeoutMs }) });
  }
  return new ProxyAgent({
    uri: url.href,
    proxyTunnel: true,
    ...KEEP_ALIVE,
    ...timeouts,
    // `proxyTls` builds the connector to the proxy (TLS only for https:// proxies), `requestTls` the
    // one to the target inside the tunnel; both carry the connect timeout.
    proxyTls: { timeout: options.connectTimeoutMs },
    requestTls: { timeout: options.connectTimeoutMs },
  });
}

/** Proxy URL without credentials, for logs. */
export function proxyLabel(proxyUrl: string): string {
  const url = new URL(proxyUrl);
  return `${url.protocol}//${url.host}`;
}
