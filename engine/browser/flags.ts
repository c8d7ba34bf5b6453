/**
 * How Chromium is started: where it is, and the switches for a server without internet access whose
 * every browser request must pass the target check.
 */
import { accessSync, constants } from 'node:fs';

export interface HostOverride {
  pattern: string;
  address: string;
}

/**
 * Debian and Ubuntu locations, tried in this order when `CHROMIUM_PATH` is unset:
 *   - Debian's `chromium-headless-shell` (Chromium's "old" headless mode, a browser without any desktop
 *     UI): about half the CPU per rendered page of the full browser, whose new headless mode opens a
 *     complete browser window for every context (see the README);
 *   - the full browser's binary itself, not Debian's `/usr/bin/chromium` launcher script, which starts
 *     a shell and helpers on every launch and adds desktop switches (GPU rasterization and the like);
 *   - the usual launchers elsewhere.
 */
export const CHROMIUM_CANDIDATES: readonly string[] = [
  '/usr/lib/chromium/chromium-headless-shell',
  '/usr/lib/chromium/chromium',
  '/usr/bin/chromium-headless-shell',
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
];

/** The first of `candidates` that is an executable file. */
export function firstExecutable(candidates: readonly string[]): string | undefined {
  return candidates.find((candidate) => {
    try {
      accessSync(candidate, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

export function findChromium(configured: string | undefined): string {
  const candidates = configured ? [configured] : CHROMIUM_CANDIDATES;
  const found = firstExecutable(candidates);
  if (!found) throw new Error(`no Chromium executable found (tried ${candidates.join(', ')}); set CHROMIUM_PATH`);
  return found;
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

/**
 * Playwright's own `--disable-features` list (playwright-core 1.65, `chromiumSwitches.ts`). Chromium
 * keeps only the last `--disable-features` switch, so ours must repeat these; a test checks that the
 * browser's command line still carries all of them when playwright changes its list.
 */
const PLAYWRIGHT_DISABLED_FEATURES = [
  'AvoidUnnecessaryBeforeUnloadCheckSync',
  'DestroyProfileOnBrowserClose',
  'HttpsUpgrades',
  'HttpsFirstBalancedModeAutoEnable',
  'LensOverlay',
  'MediaRouter',
  'PaintHolding',
  'ThirdPartyStoragePartitioning',
  'AvoidCorsURLLoaderRestartOnRedirect',
  'TcpPortRandomizationWin',
  'OptimizationHints',
  'NetworkTimeServiceQuerying',
  'AimEnabled',
  'PreconnectToSearch',
  'msForceBrowserSignIn',
  'msEdgeUpdateLaunchServicesPreferredVersion',
];

/**
 * Work a headless server never needs, per context (measured in bench/render-pool.ts, see the README). In
 * Chromium's new headless mode every context gets a browser window with the whole desktop UI:
 *   - its omnibox popup is a WebUI page preloaded into a renderer process of its own, one more
 *     renderer per request (WebUIOmniboxPopup, WebUIOmniboxAimPopup, WebUIOmniboxFullPopup) and
 *     top-chrome WebUIs are preloaded likewise (PreloadTopChromeWebUI);
 *   - a spare renderer is started ahead for the context that just navigated, which the next request
 *     (another context) can never use (SpareRendererForSitePerProcess).
 */
const DISABLED_FEATURES = [
  ...PLAYWRIGHT_DISABLED_FEATURES,
  'WebUIOmniboxPopup',
  'WebUIOmniboxAimPopup',
  'WebUIOmniboxFullPopup',
  'PreloadTopChromeWebUI',
  'SpareRendererForSitePerProcess',
  // A page left for another request of the same account (pool.ts) must not keep its last document
  // alive in the back/forward cache.
  'BackForwardCache',
];

/** Switches on top of playwright's own (which already disable extensions, breakpad and the like). */
export function chromiumArgs(options: { hostOverrides: readonly HostOverride[]; extra?: readonly string[]; webgl?: boolean }): string[] {
  const rules = hostResolverRules(options.hostOverrides);
  return [
    // Without WebGL the GPU process loads no software rasterizer (SwiftShader): 15–35 MB less (README).
    ...(options.webgl === false ? ['--disable-software-rasterizer', '--disable-gpu-compositing'] : []),
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
    `--disable-features=${DISABLED_FEATURES.join(',')}`,
    ...(rules ? [`--host-resolver-rules=${rules}`] : []),
    ...(options.extra ?? []),
  ];
}
