/**
 * Turns what undici, Node's sockets and the SOCKS5 client throw into an engine error kind, by the
 * errors' string `code`s (and the one tunnel message undici gives no code of its own). Through a
 * proxy, a failure to reach or to use the proxy is `proxy_failed`, so the engine rests it and tries
 * another; what happens inside an established tunnel is the target's.
 */
import type { EngineErrorKind } from '../types';

export interface Classified {
  kind: EngineErrorKind;
  detail: string;
}

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NODATA', 'EAI_NONAME', 'EAI_FAIL']);
const CONNECT_CODES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'EADDRNOTAVAIL', 'ENETDOWN']);
const CLOSED_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'ECONNABORTED']);
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
/** SOCKS5 replies that speak of the target, not of the proxy: network/host unreachable, refused, TTL. */
const SOCKS_TARGET_REPLIES = new Set(['UND_ERR_SOCKS5_REPLY_3', 'UND_ERR_SOCKS5_REPLY_4', 'UND_ERR_SOCKS5_REPLY_5', 'UND_ERR_SOCKS5_REPLY_6']);
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|EPROTO$|ERR_OSSL)/;

interface ErrorLike {
  code?: unknown;
  message?: unknown;
  cause?: unknown;
}

/** The error and its causes, outermost first (undici sometimes wraps the socket's error). */
function chain(error: unknown): ErrorLike[] {
  const links: ErrorLike[] = [];
  let current: unknown = error;
  while (typeof current === 'object' && current !== null && links.length < 4) {
    links.push(current as ErrorLike);
    current = (current as ErrorLike).cause;
  }
  return links;
}

const codeOf = (link: ErrorLike): string => (typeof link.code === 'string' ? link.code : '');
const messageOf = (link: ErrorLike): string => (typeof link.message === 'string' ? link.message : '');

export function classifyTransportError(error: unknown, context: { proxied: boolean }): Classified {
  const links = chain(error);
  const codes = links.map(codeOf);
  const messages = links.map(messageOf);
  const has = (test: (code: string) => boolean): boolean => codes.some(test);
  const proxyFailure = (detail: string): Classified => ({ kind: 'proxy_failed', detail });

  const forbidden = links.find((link) => codeOf(link) === 'ERR_TARGET_FORBIDDEN');
  if (forbidden) return { kind: 'target_forbidden', detail: messageOf(forbidden) };

  const tunnel = messages.map((message) => /Proxy response \((\d+)\)/.exec(message)).find(Boolean);
  if (tunnel) return proxyFailure(`the proxy refused the tunnel with status ${tunnel[1]}`);
  if (messages.some((message) => message.includes('Proxy Authentication Required'))) return proxyFailure('the proxy refused its credentials');
  if (has((code) => code === 'UND_ERR_PRX_TLS')) return proxyFailure('the TLS connection to the proxy failed');

  const socks = codes.find((code) => code.startsWith('UND_ERR_SOCKS5'));
  if (socks && SOCKS_TARGET_REPLIES.has(socks)) return { kind: 'connect_failed', detail: 'the proxy could not connect to the target' };
  if (socks) return proxyFailure(`the SOCKS5 proxy failed (${socks.replace('UND_ERR_SOCKS5_', '').toLowerCase()})`);
  if (messages.some((message) => /^SOCKS5 (authentication|connection) timeout/.test(message))) return proxyFailure('the SOCKS5 proxy did not answer');

  if (has((code) => code === 'UND_ERR_CONNECT_TIMEOUT')) {
    return context.proxied ? proxyFailure('connecting to the proxy timed out') : { kind: 'timeout', detail: 'connecting to the target timed out' };
  }
  if (has((code) => DNS_CODES.has(code))) {
    return context.proxied ? proxyFailure('the proxy host name could not be resolved') : { kind: 'dns_failed', detail: 'the target host name could not be resolved' };
  }
  if (has((code) => CONNECT_CODES.has(code))) {
    return context.proxied ? proxyFailure('the proxy could not be reached') : { kind: 'connect_failed', detail: 'the target could not be reached' };
  }
  if (has((code) => TIMEOUT_CODES.has(code))) {
    return { kind: 'timeout', detail: codes.includes('UND_ERR_HEADERS_TIMEOUT') ? 'the target sent no response headers in time' : 'the target stopped sending the body' };
  }
  if (has((code) => TLS_CODE.test(code))) return { kind: 'tls_failed', detail: 'the TLS handshake with the target failed' };
  if (has((code) => code.startsWith('HPE_'))) return { kind: 'protocol_error', detail: 'the target answered with malformed HTTP' };
  // A 101 nobody asked for: undici fails an assertion on one without Upgrade, and closes the socket on one with it.
  if (has((code) => code === 'ERR_ASSERTION') || messages.includes('bad upgrade')) {
    return { kind: 'protocol_error', detail: 'the target switched protocols without being asked to' };
  }
  if (has((code) => code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH' || code === 'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH')) {
    return { kind: 'protocol_error', detail: 'the body length did not match Content-Length' };
  }
  if (has((code) => CLOSED_CODES.has(code))) return { kind: 'connect_failed', detail: 'the connection closed before the response was complete' };
  if (has((code) => code === 'UND_ERR_INVALID_ARG' || code === 'UND_ERR_NOT_SUPPORTED')) {
    return { kind: 'invalid_request', detail: 'the request cannot be sent as given' };
  }
  return { kind: 'internal', detail: 'the fetch failed unexpectedly' };
}
