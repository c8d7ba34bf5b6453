/**
 * What goes into a browser render and what comes out. Like the plain engine, failures are values with
 * a string `kind`; the failure table (engine/failures.ts) says per kind which Fetch error code the API
 * answers with, whose fault it is and whether another try (or another configuration) may succeed.
 */
import type { Instruction, InstructionsReport } from './instructions';

/** Verdict of the target check for one URL the page wants to load. */
export type GuardVerdict = { allowed: true } | { allowed: false; reason: string };

/**
 * Called for every request a page makes: navigations, redirect hops, sub-resources, XHR/fetch,
 * iframes, workers, WebSockets. Wire it to the shared target-safety module.
 */
export type RequestGuard = (url: URL) => Promise<GuardVerdict>;

/** A proxy for one browser context (one request). */
export interface BrowserProxy {
  /** `http://host:port`, `https://…` or `socks5://…`. */
  server: string;
  username?: string;
  password?: string;
}

/** The `block_resources` values of the interface. */
export const BLOCKABLE_TYPES = [
  'eventsource',
  'fetch',
  'font',
  'image',
  'manifest',
  'media',
  'other',
  'script',
  'stylesheet',
  'texttrack',
  'websocket',
  'xhr',
] as const;
export type BlockableType = (typeof BLOCKABLE_TYPES)[number];

export type Device = 'desktop' | 'mobile';

export interface ScreenshotRequest {
  /** `viewport`: above the fold; `fullpage`: the whole document; `element`: the first match of `selector`. */
  area: 'viewport' | 'fullpage' | 'element';
  selector?: string;
  format: 'png' | 'jpeg';
  /** 1..100, jpeg only. */
  quality?: number;
}

export interface RenderRequest {
  url: string;
  method?: 'GET' | 'POST' | 'PUT';
  /** Sent with the first navigation when `method` is POST or PUT; give its Content-Type in `headers`. */
  body?: Buffer;
  /**
   * The caller's forwarded headers (`custom_headers`). `Cookie` becomes cookies of the context for the
   * target, `User-Agent` the context's user agent, the rest go with every request to the target's origin.
   */
  headers?: ReadonlyArray<readonly [string, string]>;
  proxy?: BrowserProxy;
  device?: Device;
  windowWidth?: number;
  windowHeight?: number;
  /** Least milliseconds after load before the page is taken; the settle after load counts toward it. */
  wait?: number;
  /** CSS selector that must appear before the page is taken. */
  waitFor?: string;
  /** Resource types refused; `undefined` means the default set (see `defaultBlockedTypes`). */
  blockResources?: readonly BlockableType[];
  /** Already validated by `parseInstructions`. */
  instructions?: readonly Instruction[];
  screenshot?: ScreenshotRequest;
  pdf?: boolean;
  /** Record the XHR/fetch calls of the page (for `json_response`). */
  captureXhr?: boolean;
  /** Deadline of this render; defaults to the configured `RENDER_TIMEOUT_MS`. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * Renders with the same key may use one browser context in turn, cleared in between (pool.ts): the
   * caller's account. Without it every render gets a fresh context.
   */
  reuseKey?: string;
  /**
   * Pages the renders with this `reuseKey` may hold at once on the machine's browser (the caller's
   * share; cut to 1..BROWSER_MAX_PAGES); further ones wait, and waiting keys are served in turn. Unset:
   * every page.
   */
  pageShare?: number;
}

/** One XHR/fetch call of the page, shaped as `json_response` carries it. */
export interface XhrRecord {
  url: string;
  method: string;
  /** 0 when the call got no response. */
  status: number;
  request_headers: Record<string, string>;
  response_headers: Record<string, string>;
  /** UTF-8 text, or base64 when `body_encoding` says so; cut at the configured limit. */
  body: string;
  body_encoding?: 'base64';
  body_truncated?: boolean;
  error?: string;
}

export interface RefusedRequest {
  url: string;
  resourceType: string;
  reason: string;
}

export interface Screenshot {
  data: Buffer;
  contentType: 'image/png' | 'image/jpeg';
  /** True when the page or element was taller (or wider) than the cap and the picture was cut. */
  clipped: boolean;
}

export interface RenderSuccess {
  ok: true;
  /** Status of the main document's final response (after redirects). */
  status: number;
  /** Its headers, names lower-cased, repeated headers as separate pairs. */
  headers: Array<[string, string]>;
  /** The document after scripts, waits and instructions. */
  html: string;
  /** The page's URL when it was taken (redirects and instruction navigations included). */
  finalUrl: string;
  xhr?: XhrRecord[];
  instructionsReport?: InstructionsReport;
  screenshot?: Screenshot;
  pdf?: Buffer;
  /** Requests the target check refused (the page went on without them). */
  refused: RefusedRequest[];
  /** Requests not made because of `block_resources`. */
  blockedCount: number;
  /** What ended the wait after load: nothing that can add content was pending any more, or the cap. */
  settledBy: 'idle' | 'cap';
  /** Milliseconds from load to the page being taken (`wait` included). */
  settleMs: number;
}

export type RenderErrorKind =
  | 'invalid_parameter'
  | 'target_forbidden'
  | 'dns_failed'
  | 'navigation_failed'
  | 'selector_not_found'
  | 'timeout'
  | 'aborted'
  | 'browser_crashed'
  | 'launch_failed'
  | 'pool_closed'
  | 'internal';

export interface RenderError {
  kind: RenderErrorKind;
  /** One sentence for logs and the problem document's `detail`; no internals. */
  detail: string;
  /** The request parameter at fault, for `invalid_parameter`. */
  parameter?: string;
  url?: string;
  /**
   * How long the render held its browser page, when it got one and then failed: a `timeout` with
   * most of the deadline here spent the machine's time, one with little waited for a page.
   */
  heldPageMs?: number;
  /** The navigation's answer was a download (an attachment, or a file the browser does not display): its bytes are to be fetched, not rendered. */
  download?: boolean;
}

export interface RenderFailure {
  ok: false;
  error: RenderError;
}

export type RenderResult = RenderSuccess | RenderFailure;

export const renderFailure = (kind: RenderErrorKind, detail: string, extra: Omit<RenderError, 'kind' | 'detail'> = {}): RenderFailure => ({
  ok: false,
  error: { kind, detail, ...extra },
});

/**
 * Thrown inside the browser code to stop a render with a known failure; `render` turns it back into a
 * value. Recognised by its `kind` member, not by `instanceof`.
 */
export class RenderStop extends Error {
  readonly kind = 'render-stop';
  constructor(readonly failure: RenderFailure) {
    super(`${failure.error.kind}: ${failure.error.detail}`);
    this.name = 'RenderStop';
  }
}

export const stopWith = (kind: RenderErrorKind, detail: string, extra: Omit<RenderError, 'kind' | 'detail'> = {}): RenderStop =>
  new RenderStop(renderFailure(kind, detail, extra));

export const isRenderStop = (error: unknown): error is RenderStop =>
  typeof error === 'object' && error !== null && (error as { kind?: unknown }).kind === 'render-stop';
