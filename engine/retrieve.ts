/**
 * One page, retrieved in a fixed configuration or under `mode=auto`: the piece the Fetch route and the
 * crawl activities share. It joins the plain transport, the browser renderer and the escalation
 * ladder, and turns their outcomes into one `Page` or one failure with its Fetch error code.
 *
 *   respect_robots: the origin's robots.txt first (engine/robots); a disallowed URL is never fetched
 *   fixed: run the configuration's engine once (the target's status is the caller's business)
 *   auto:  runLadder(plain → js_render → premium → both), `beforeRung` may veto a rung (credits)
 *   each try: through the installation's host gate (engine/politeness), each hop of a plain fetch at
 *   its own host's turn and each answer fed back against the host that gave it
 */
import type { ErrorCode } from '../base/errors';
import type { Logger } from '../base/log';
import { render, type BrowserPool, type RenderLimits, type BrowserProxy, type RenderRequest, type XhrRecord, type InstructionsReport, type Screenshot } from './browser';
import type { FetchEngine } from './http/engine';
import { configurationOf } from './escalation/configurations';
import { detectBlock, RUNGS, rungById, runLadder, type Attempt, type Rung, type RungMemory } from './escalation';
import { FAILURES, type FailureKind } from './failures';
import { engineError, type BodyCheck, type BodyRefusal, type EngineMethod, type EngineProxyInfo, type HopGate } from './types';
import { isHostWait, type GateAnswer, type HostGate, type HostWait, type Park } from './politeness';
import type { RobotsReader } from './robots';
import { documentFormatOfType } from './documents/detect';

export interface RetrievalDeps {
  engine: FetchEngine;
  browsers: BrowserPool;
  memory: RungMemory;
  log: Logger;
  renderLimits?: Partial<RenderLimits>;
  /** The installation's host gate: every try at a target passes it. */
  gate?: HostGate;
  /** robots.txt per origin, for requests that respect it. */
  robots?: { reader: RobotsReader; cacheMs: number };
}

export type BrowserOptions = Pick<
  RenderRequest,
  'instructions' | 'wait' | 'waitFor' | 'blockResources' | 'device' | 'windowWidth' | 'windowHeight' | 'screenshot' | 'pdf' | 'captureXhr'
>;

export type RetrievalMode =
  | { kind: 'fixed'; jsRender: boolean; premiumProxy: boolean }
  /** `needsBrowser`: the request asks for something only a browser gives (screenshot, instructions …). */
  | { kind: 'auto'; needsBrowser: boolean };

export interface RetrieveRequest {
  url: string;
  method?: EngineMethod;
  headers?: ReadonlyArray<readonly [string, string]>;
  body?: Buffer;
  proxyCountry?: string;
  sessionId?: number;
  browser?: BrowserOptions;
  mode: RetrievalMode;
  signal?: AbortSignal;
  /** Asked before a configuration is tried; answering false stops with `vetoed` (for example, no credits). */
  beforeRung?: (rung: Rung) => Promise<boolean>;
  /** Under mode=auto: answers to return as they are instead of escalating (a crawl waits out `Retry-After`). */
  acceptAsIs?: (page: Page) => boolean;
  /** Renders with the same key (the caller's account) may take turns on a browser context, cleared in between. */
  reuseKey?: string;
  /** Browser pages the renders with this `reuseKey` may hold at once (the caller's share of the machine's); unset: all. */
  renderPages?: number;
  /** Whose request this is, for the host gate's turns between accounts (default: `reuseKey`). */
  account?: string;
  /** Ask the origin's robots.txt first; a disallowed URL fails with `robots_disallowed`, nothing tried. */
  respectRobots?: boolean;
  /** Longest wait for a host's turn, every wait together (a pause, a Crawl-delay, a rate, a full host); longer fails at once as `host_paused` (synchronous callers). */
  maxHostWaitMs?: number;
  /** Waits at hosts run inside it: the caller gives back its shared slots meanwhile (Batch tasks). */
  park?: Park;
  /** Watches a plain fetch's body as it is read (the parse caps of the outputs the caller wants): a refused body is not read further. */
  pageCheck?: BodyCheck;
}

export interface Page {
  ok: true;
  status: number;
  headers: Array<[string, string]>;
  /** The body as received (plain) or the rendered HTML as UTF-8 (browser). */
  body: Buffer;
  contentType?: string;
  /** The request's `pageCheck` refused the page while it was downloaded: `body` is only its first part. */
  refused?: BodyRefusal;
  /** Set when a browser rendered the page. */
  html?: string;
  finalUrl: string;
  xhr?: XhrRecord[];
  instructionsReport?: InstructionsReport;
  /** Rendered pages: what ended the wait after load (`idle` or `cap`), and how long it took. */
  settledBy?: 'idle' | 'cap';
  settleMs?: number;
  screenshot?: Screenshot;
  pdf?: Buffer;
  proxy?: EngineProxyInfo;
}

export interface RetrievalError {
  /** A row of the failure table: the engine's kind, `exhausted` when every rung was blocked, `vetoed` when `beforeRung` said no. */
  kind: FailureKind;
  /** The table's code for the kind, which the API answers with. */
  code: ErrorCode;
  detail: string;
  parameter?: string;
  /** A render that got its browser page and failed: how long it held it (engine/browser/types.ts). */
  heldPageMs?: number;
}

export interface RetrievalFailure {
  ok: false;
  error: RetrievalError;
}

export type RetrieveResult =
  | { ok: true; rung: Rung; page: Page; attempts: Attempt[] }
  | { ok: false; error: RetrievalError; rung?: Rung; attempts: Attempt[] };

const rungFor = (jsRender: boolean, premiumProxy: boolean): Rung => rungById(configurationOf({ jsRender, premiumProxy }).id)!;

/** A failure of `kind` with the table's code. */
const retrievalError = (kind: FailureKind, detail: string, parameter?: string): RetrievalError => ({
  kind,
  code: FAILURES[kind].code,
  detail,
  ...(parameter ? { parameter } : {}),
});

const failure = (kind: FailureKind, detail: string, parameter?: string): RetrievalFailure => ({ ok: false, error: retrievalError(kind, detail, parameter) });

const VETOED = failure('vetoed', 'Not enough credits for the next configuration.');

export function createRetrieval(deps: RetrievalDeps) {
  const { engine, browsers, memory, log, renderLimits, gate, robots } = deps;

  /** The browser's per-request check: the same policy and resolver as plain fetches. */
  async function guard(url: URL): Promise<{ allowed: true } | { allowed: false; reason: string }> {
    const verdict = engine.guard.checkUrl(url);
    if (!verdict.ok) return { allowed: false, reason: verdict.reason };
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const resolution = await engine.guard.resolve(host);
    return resolution.ok ? { allowed: true } : { allowed: false, reason: resolution.reason };
  }

  function browserProxy(request: RetrieveRequest, premium: boolean): { ok: true; proxy?: BrowserProxy; info?: EngineProxyInfo } | RetrievalFailure {
    if (!engine.proxies.uses({ premium })) return { ok: true };
    const choice = engine.proxies.choose({ premium, country: request.proxyCountry, sessionId: request.sessionId, exclude: new Set() });
    if (!choice.ok) return failure('proxy_unavailable', choice.reason);
    if (!choice.proxy) return { ok: true };
    const url = new URL(choice.proxy.url);
    return {
      ok: true,
      proxy: {
        server: `${url.protocol}//${url.host}`,
        ...(url.username ? { username: decodeURIComponent(url.username), password: decodeURIComponent(url.password) } : {}),
      },
      info: { id: choice.proxy.id, ...(choice.proxy.country ? { country: choice.proxy.country } : {}) },
    };
  }

  async function fetchPlain(request: RetrieveRequest, rung: Rung): Promise<Page | RetrievalFailure> {
    const result = await engine.fetch(
      {
        url: request.url,
        method: request.method,
        headers: request.headers,
        body: request.body,
        premiumProxy: rung.premiumProxy,
        proxyCountry: request.proxyCountry,
        sessionId: request.sessionId,
        ...(gate ? { hops: hopsOf(request) } : {}),
        ...(request.pageCheck ? { bodyCheck: request.pageCheck } : {}),
      },
      request.signal,
    );
    if (!result.ok) return failure(result.error.kind, result.error.detail);
    return {
      ok: true,
      status: result.status,
      headers: result.headers,
      body: result.body,
      contentType: result.contentType,
      ...(result.refused ? { refused: result.refused } : {}),
      finalUrl: result.finalUrl,
      ...(result.proxy ? { proxy: result.proxy } : {}),
    };
  }

  async function fetchRendered(request: RetrieveRequest, rung: Rung): Promise<Page | RetrievalFailure> {
    const proxy = browserProxy(request, rung.premiumProxy);
    if (!proxy.ok) return proxy;
    const result = await render(
      {
        ...request.browser,
        url: request.url,
        method: request.method,
        body: request.body,
        headers: request.headers,
        ...(proxy.proxy ? { proxy: proxy.proxy } : {}),
        ...(request.reuseKey !== undefined ? { reuseKey: request.reuseKey } : {}),
        ...(request.renderPages !== undefined ? { pageShare: request.renderPages } : {}),
        signal: request.signal,
      },
      { pool: browsers, guard, log, ...(renderLimits ? { limits: renderLimits } : {}) },
    );
    // A document behind a rendered URL: an attachment (a download to the browser), or a PDF that
    // Chromium shows in its viewer, whose HTML is an empty shell. Its bytes come through the plain
    // transport (the same target check, proxy pool and gate turn), as the caller's configuration.
    if (!result.ok && result.error.download) return fetchPlain(request, rung);
    if (!result.ok) {
      const { kind, detail, parameter, heldPageMs } = result.error;
      const failed = failure(kind, detail, parameter);
      return heldPageMs === undefined ? failed : { ok: false, error: { ...failed.error, heldPageMs } };
    }
    const contentType = result.headers.find(([name]) => name === 'content-type')?.[1];
    if (documentFormatOfType(contentType) && !result.pdf && !result.screenshot) return fetchPlain(request, rung);
    return {
      ok: true,
      status: result.status,
      headers: result.headers,
      body: Buffer.from(result.html, 'utf8'),
      contentType: contentType ?? 'text/html; charset=utf-8',
      html: result.html,
      finalUrl: result.finalUrl,
      ...(result.xhr ? { xhr: result.xhr } : {}),
      ...(result.instructionsReport ? { instructionsReport: result.instructionsReport } : {}),
      settledBy: result.settledBy,
      settleMs: result.settleMs,
      ...(result.screenshot ? { screenshot: result.screenshot } : {}),
      ...(result.pdf ? { pdf: result.pdf } : {}),
      ...(proxy.info ? { proxy: proxy.info } : {}),
    };
  }

  /**
   * `premium_proxy=true` where no premium proxy is configured: the deployment's limit, answered as a
   * refusal of the parameter that no retry can change; a target the policy refuses says so first.
   */
  async function premiumUnavailable(url: string): Promise<RetrievalError> {
    let target: URL | undefined;
    try {
      target = new URL(url);
    } catch {
      target = undefined;
    }
    const verdict = target ? await guard(target).catch(() => ({ allowed: false as const, reason: 'the target check failed' })) : undefined;
    if (verdict && !verdict.allowed) return retrievalError('target_forbidden', verdict.reason);
    return retrievalError('premium_unavailable', 'premium_proxy: this service has no premium proxies configured; send premium_proxy=false, or mode=auto.', 'premium_proxy');
  }

  const fetcherFor = (rung: Rung) => (rung.engine === 'rendered' ? fetchRendered : fetchPlain);

  const hostWaitDetail = (wait: HostWait): string =>
    wait.reason === 'paused'
      ? `${wait.host} answered 429 or 503 and is paused for every request for ${Math.max(1, Math.ceil((wait.until - Date.now()) / 1000))} s more; try again after that.`
      : `${wait.host} is busy with other requests (its concurrency, rate or Crawl-delay) for longer than this request waits; try again in ${Math.max(1, Math.ceil((wait.until - Date.now()) / 1000))} s.`;

  const entryOf = (request: RetrieveRequest) => ({
    account: request.account ?? request.reuseKey ?? '',
    ...(request.signal ? { signal: request.signal } : {}),
    ...(request.maxHostWaitMs !== undefined ? { maxWaitMs: request.maxHostWaitMs } : {}),
    ...(request.park ? { park: request.park } : {}),
  });

  /** The gate as the plain engine asks it, hop by hop: a refusal as the engine's failure; the store away, the hop goes ungated. */
  function hopsOf(request: RetrieveRequest): HopGate | undefined {
    if (!gate) return undefined;
    return {
      async enter(url) {
        try {
          return { ok: true, ...(await gate.enter(url, entryOf(request))) };
        } catch (error) {
          if (isHostWait(error)) return engineError('host_paused', hostWaitDetail(error), { url: url.href });
          if (request.signal?.aborted) return engineError('aborted', 'The request was cancelled while it waited for its turn at the host.', { url: url.href });
          log.warn('host gate unavailable', { error: (error as Error).message });
          return { ok: true, done: () => undefined };
        }
      },
    };
  }

  async function vetted(request: RetrieveRequest, rung: Rung): Promise<Page | RetrievalFailure> {
    if (request.beforeRung && !(await request.beforeRung(rung))) return VETOED;
    // Plain fetches pass the gate hop by hop inside the engine.
    if (rung.engine !== 'rendered' || !gate) return fetcherFor(rung)(request, rung);
    // A browser follows redirects itself: its first host waits its turn, and the answer counts for the host that gave it.
    let ticket;
    try {
      ticket = await gate.enter(request.url, entryOf(request));
    } catch (error) {
      if (isHostWait(error)) return failure('host_paused', hostWaitDetail(error));
      if (request.signal?.aborted) return failure('aborted', 'The request was cancelled while it waited for its turn at the host.');
      // The gate's store is away: the request goes as it would have without the gate.
      log.warn('host gate unavailable', { error: (error as Error).message });
      return fetcherFor(rung)(request, rung);
    }
    let answer: GateAnswer | undefined;
    try {
      const outcome = await fetcherFor(rung)(request, rung);
      if (outcome.ok) answer = { status: outcome.status, headers: outcome.headers, url: outcome.finalUrl };
      return outcome;
    } finally {
      ticket.done(answer);
    }
  }

  /** The refusal of a URL its origin's robots.txt disallows, or undefined; its Crawl-delay goes to the gate. */
  async function robotsRefusal(request: RetrieveRequest): Promise<RetrievalError | undefined> {
    if (!request.respectRobots || !robots) return undefined;
    let verdict;
    try {
      verdict = await robots.reader.check(request.url, request.signal);
    } catch {
      // Not a URL robots.txt can speak of: the fetch itself says what is wrong with it.
      return undefined;
    }
    if (gate) await gate.crawlDelay(request.url, verdict.crawlDelayMs, robots.cacheMs).catch(() => undefined);
    return verdict.allowed ? undefined : retrievalError('robots_disallowed', `${verdict.reason ?? 'robots.txt disallows this URL'}.`);
  }

  return {
    guard,
    async retrieve(request: RetrieveRequest): Promise<RetrieveResult> {
      const refusal = request.respectRobots ? await robotsRefusal(request) : undefined;
      if (refusal) return { ok: false, error: refusal, attempts: [] };
      const premiumAvailable = engine.proxies.uses({ premium: true });
      if (request.mode.kind === 'fixed') {
        const rung = rungFor(request.mode.jsRender, request.mode.premiumProxy);
        if (rung.premiumProxy && !premiumAvailable) return { ok: false, error: await premiumUnavailable(request.url), rung, attempts: [] };
        const began = Date.now();
        const outcome = await vetted(request, rung);
        const attempts: Attempt[] = [
          { rung: rung.id, outcome: outcome.ok ? 'success' : 'failed', ...(outcome.ok ? { status: outcome.status } : { reason: outcome.error.kind }), duration_ms: Date.now() - began },
        ];
        return outcome.ok ? { ok: true, rung, page: outcome, attempts } : { ok: false, error: outcome.error, rung, attempts };
      }
      // Rungs this deployment cannot run (premium proxies that are not configured) are never tried nor billed.
      const { needsBrowser } = request.mode;
      const rungs = RUNGS.filter((rung) => (!needsBrowser || rung.engine === 'rendered') && (premiumAvailable || !rung.premiumProxy));
      const { acceptAsIs } = request;
      const ladder = await runLadder<RetrieveRequest, Page, RetrievalFailure>(request, { fetchPlain: vetted, fetchRendered: vetted }, memory, {
        rungs,
        log,
        ...(acceptAsIs ? { detect: (response) => (acceptAsIs(response as Page) ? { blocked: false } : detectBlock(response)) } : {}),
      });
      if (ladder.ok) return { ok: true, rung: ladder.rung, page: ladder.result, attempts: ladder.attempts };
      if (ladder.reason === 'stopped') return { ok: false, error: ladder.failure.error, rung: ladder.rung, attempts: ladder.attempts };
      return { ok: false, error: retrievalError('exhausted', ladder.detail), attempts: ladder.attempts };
    },
  };
}

export type Retrieval = ReturnType<typeof createRetrieval>;
