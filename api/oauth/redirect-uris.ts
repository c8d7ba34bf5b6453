/**
 * Which redirect URIs a client may register (OAuth 2.1 §2.3.1, RFC 8252): https anywhere, http only on
 * a loopback address (native apps' local listeners); never a fragment, never credentials.
 */
const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);

export function validRedirectUri(raw: string): boolean {
  if (raw.length > 2048) return false;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  if (url.hash || raw.includes('#') || url.username || url.password) return false;
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && LOOPBACK.has(url.hostname);
}
