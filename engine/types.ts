/**
 * What goes into the plain fetch engine and what comes out. Failures are values with a string `kind`;
 * the failure table (failures.ts) says, per kind, which Fetch error code the API answers with, whose
 * fault it is and what may help, so callers branch on data, not on classes.
 */

export type EngineMethod = 'GET' | 'POST' | 'PUT';

export interface EngineTimeouts {
  /** Longest wait for the response headers of one hop. */
  headersMs: number;
  /** Longest silence between two body chunks. */
  bodyMs: number;
  /** Deadline of the whole fetch: every hop, every proxy attempt. */
  totalMs: number;
}

export interface EngineRequest {
  url: string;
  method?: EngineMethod;
  /**
   * Headers to send to the target on top of the browser-like defaults (a caller's value replaces the
   * default of the same name). Hop-by-hop and proxy headers are dropped; Accept-Encoding stays ours.
   */
  headers?: ReadonlyArray<readonly [string, string]>;
  /** Sent with POST and PUT only, as is; give its Content-Type in `headers`. */
  body?: Buffer;
  /** Route through the premium (residential) pool. */
  premiumProxy?: boolean;
  /** Two-letter country, any case; picks premium proxies tagged with it (ignored without `premiumProxy`). */
  proxyCountry?: string;
  /** Pins one proxy of the pool for 10 minutes to requests with the same id (and pool and country). */
  sessionId?: string | number;
  timeouts?: Partial<EngineTimeouts>;
  /** Lower cap than `FETCH_MAX_BYTES` for this request (a plan limit); never raises it. */
  maxBytes?: number;
  /** Every hop of the request (its redirects included) asks its own host's turn here and says how that host answered. */
  hops?: HopGate;
  /** Watches the final answer's body as it is read, and may cut its download short. */
  bodyCheck?: BodyCheck;
}

/** A cap the caller's use of a body has (the parse caps of the outputs it wants), checked as the body arrives. */
export interface BodyCheck {
  /** Once the final answer's headers are in; undefined: the body is read unchecked. */
  start(answer: { status: number; contentType?: string }): BodyWatch | undefined;
}

export interface BodyWatch {
  /** The next bytes as received (no Content-Encoding); a refusal stops the download there. */
  push(chunk: Uint8Array): BodyRefusal | undefined;
}

/** The cap a body went past, and the cap's value. */
export interface BodyRefusal {
  cap: 'size' | 'nodes' | 'depth';
  limit: number;
}

/** What one hop gets at its host's turn: a ticket to hand the hop's answer back, or a failure (the caller would not wait, or went away). */
export type HopTurn = { ok: true; done(answer?: { status: number; headers: ReadonlyArray<readonly [string, string]> }): void } | EngineFailure;

export interface HopGate {
  /** The hop's URL as it is fetched (parsed once, by the engine). */
  enter(url: URL): Promise<HopTurn>;
}

export interface EngineProxyInfo {
  /** Stable id within the process (`plain-1`, `premium-2`); never carries credentials. */
  id: string;
  country?: string;
}

export interface EngineSuccess {
  ok: true;
  /** The final response's status; any status, 4xx and 5xx included, is a success of the transport. */
  status: number;
  /** The final response's headers as received (names lower-cased, repeated headers kept as separate pairs). */
  headers: Array<[string, string]>;
  /** The body with its Content-Encoding undone; charset decoding is left to the caller. */
  body: Buffer;
  /** The Content-Type header value, if any (for the caller's charset and format decisions). */
  contentType?: string;
  /** The request's body check refused the body: the download was cut, and `body` is only what came before. */
  refused?: BodyRefusal;
  finalUrl: string;
  /** URLs that answered with a redirect, in order; empty when the first URL answered. */
  redirects: string[];
  proxy?: EngineProxyInfo;
}

export type EngineErrorKind =
  | 'invalid_request'
  | 'target_forbidden'
  | 'dns_failed'
  | 'connect_failed'
  | 'tls_failed'
  | 'timeout'
  | 'too_large'
  | 'too_many_redirects'
  | 'protocol_error'
  | 'proxy_failed'
  | 'proxy_unavailable'
  | 'aborted'
  /** The host's turn comes later than the caller waits (paused after 429/503, or busy). */
  | 'host_paused'
  | 'internal';

export interface EngineError {
  kind: EngineErrorKind;
  /** One sentence for logs and for the problem document's `detail`; no credentials, no internals. */
  detail: string;
  /** The URL of the hop that failed. */
  url?: string;
  proxy?: EngineProxyInfo;
}

export interface EngineFailure {
  ok: false;
  error: EngineError;
}

export type EngineResult = EngineSuccess | EngineFailure;

export const engineError = (kind: EngineErrorKind, detail: string, extra: Omit<EngineError, 'kind' | 'detail'> = {}): EngineFailure => ({
  ok: false,
  error: { kind, detail, ...extra },
});
