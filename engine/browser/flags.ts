/**
 * How Chromium is started: where it is, and the switches for a server without internet access whose
 * every browser request must pass the target check.
 */
import { accessSync, constants } from 'node:fs';

export interface HostOverride {
  pattern: string;
  address: string;
}

/** Debian and Ubuntu locations, tried when `CHROMIUM_PATH` is unset. */
const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/lib/chromium/chromium'];

export function findChromium(configured: string | undefined): string {
  const candidates = configured ? [configured] : CANDIDATES;
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // next one
    }
  }
  throw new Error(`no Chromium executable found (tried ${candidates.join(', ')}); set CHROMIUM_PATH`);
}

/**
 * `HOST_OVERRIDES` pairs as Chromium `--host-resolver-rules`: `*.shop.test=127.0.0.1` becomes
 * `MAP *.shop.test 127.0.0.1`. Empty when there is nothing to map.
 */
export function hostResolverRules(overrides: readonly HostOverride[]): string {
  return overrides
    .map(({ pattern, address }) => `MAP ${pattern} ${address.includes(':') && !address.startsWith('[') ? `[${address}]` : address}`)
    .join(', ');
}

/** Switches on top of playwright's own (which already disable extensions, breakpad and the like). */
export function chromiumArgs(options: { hostOverrides: readonly HostOverride[]; extra?: readonly string[] }): string[] {
  const rules = hostResolverRules(options.hostOverrides);
  return [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-dev-shm-usage',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    '--disable-quic',
    '--metrics-recording-only',
    '--disable-default-apps',
    '--disable-domain-reliability',
    '--disable-client-side-phishing-detection',
    '--no-pings',
    // Cross-site iframes stay in the page's renderer, so the page's interceptor sees their requests.
    '--disable-site-isolation-trials',
    // No popups or new windows: every page of a context is one the pool opened and guards.
    '--block-new-web-contents',
    ...(rules ? [`--host-resolver-rules=${rules}`] : []),
    ...(options.extra ?? []),
  ];
}
