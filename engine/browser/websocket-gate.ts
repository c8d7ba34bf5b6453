/**
 * The target check for WebSockets, which the DevTools `Fetch` domain never sees. A small script runs in
 * every document before the page's own (every frame, on every navigation) and puts a stand-in in place
 * of `WebSocket`: `new WebSocket(url)` asks this process first, over a DevTools binding, and only once
 * the URL passed the check (and `block_resources` does not name `websocket`) does the real socket open;
 * otherwise the page sees what a failed connection looks like (`error`, then `close` with 1006).
 *
 * This replaces playwright's `routeWebSocket`, which injects three large scripts (its binding
 * controller, its utility script and a full WebSocket mock) into every document of every page: about
 * 15 ms of CPU per rendered page for a feature few pages use.
 *
 * The answer can only reach the stand-in that asked: it carries a random token only the stand-in and
 * this process know, and the function it is delivered to cannot be replaced or shadowed by the page.
 */
import type { CDPSession, Page } from 'playwright-core';

const ASK = '__fetchplaneWsAsk';
const ANSWER = '__fetchplaneWsAnswer';

export interface WebSocketAsk {
  url: string;
  /** Answers the stand-in that asked (a page gone meanwhile is not an error). */
  answer(allowed: boolean): Promise<void>;
}

/**
 * Installs the stand-in on `page` (every document from the next navigation on) and calls `onAsk` for
 * each WebSocket a document wants to open. Needs the Runtime domain of `session` (bindings are only
 * reported to a session that enabled it).
 */
export async function gateWebSockets(session: CDPSession, page: Page, onAsk: (ask: WebSocketAsk) => void): Promise<void> {
  session.on('Runtime.bindingCalled', ({ name, payload, executionContextId }) => {
    if (name !== ASK) return;
    const at = payload.indexOf(' ');
    const token = payload.slice(0, at);
    if (at < 0 || !/^[0-9a-f]{32}$/.test(token)) return;
    onAsk({
      url: payload.slice(at + 1),
      answer: async (allowed) => {
        await session
          // A bare name: the page can neither shadow it (let/const) nor replace it (it is read-only).
          .send('Runtime.evaluate', { expression: `${ANSWER}(${JSON.stringify(token)}, ${allowed})`, contextId: executionContextId })
          .catch(() => undefined);
      },
    });
  });
  await session.send('Runtime.enable');
  await session.send('Runtime.addBinding', { name: ASK });
  await page.addInitScript(STAND_IN);
}

/**
 * Connections that pass neither the DevTools `Fetch` domain nor this gate: taken away from documents
 * and workers alike (WebSocketStream, WebTransport and WebRTC open sockets of their own; shared workers
 * run outside the page, so nothing of this reaches them).
 */
const UNGATED = ['WebSocketStream', 'WebTransport', 'RTCPeerConnection', 'webkitRTCPeerConnection', 'RTCDataChannel', 'SharedWorker'];

/**
 * Put in front of every dedicated worker's script (see `Worker` in the stand-in). No init script and
 * no binding reach a worker before its first line, so a worker gets no WebSockets at all: each fails
 * as a refused one does. It starts no workers of its own. Its script runs from a blob, so the relative
 * URLs it loads (importScripts, fetch, XMLHttpRequest) are resolved against its own URL here, as they
 * would have been; only `self.location` shows the blob's address.
 */
const WORKER_PRELUDE = `(() => {
  const base = self.__fetchplaneWorkerBase; delete self.__fetchplaneWorkerBase;
  const NativeURL = URL, NativeEvent = Event, NativeCloseEvent = CloseEvent, later = setTimeout, Exception = DOMException;
  const resolve = (url) => { try { return new NativeURL(String(url), base).href; } catch { return url; } };
  const lock = (name, value) => { try { Object.defineProperty(self, name, { value, writable: false, configurable: false }); } catch {} };
  class WebSocket extends EventTarget {
    #url;
    constructor(url) {
      super();
      if (arguments.length === 0) throw new TypeError("Failed to construct 'WebSocket': 1 argument required, but only 0 present.");
      this.#url = resolve(url);
      this.onopen = this.onmessage = this.onerror = this.onclose = null;
      later(() => {
        const error = new NativeEvent('error'); if (typeof this.onerror === 'function') this.onerror(error); this.dispatchEvent(error);
        const close = new NativeCloseEvent('close', { code: 1006, reason: '', wasClean: false }); if (typeof this.onclose === 'function') this.onclose(close); this.dispatchEvent(close);
      }, 0);
    }
    get url() { return this.#url; }
    get readyState() { return 3; }
    get bufferedAmount() { return 0; }
    get protocol() { return ''; }
    get extensions() { return ''; }
    send() {}
    close() {}
  }
  ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED'].forEach((name, value) => {
    Object.defineProperty(WebSocket, name, { value, enumerable: true });
    Object.defineProperty(WebSocket.prototype, name, { value, enumerable: true });
  });
  lock('WebSocket', WebSocket);
  for (const name of ${JSON.stringify([...UNGATED, 'Worker'])}) lock(name, undefined);
  const importScripts = self.importScripts, fetch = self.fetch, open = XMLHttpRequest.prototype.open;
  if (importScripts) self.importScripts = (...urls) => importScripts(...urls.map(resolve));
  self.fetch = (input, init) => fetch(typeof input === 'string' || input instanceof NativeURL ? resolve(input) : input, init);
  XMLHttpRequest.prototype.open = function (method, url, ...rest) { return open.call(this, method, resolve(url), ...rest); };
})();`;

/**
 * The stand-in. Everything it relies on is taken before the page's scripts run, so a page that patches
 * built-ins later cannot get between it and this process. It behaves like WebSocket for pages: the
 * same constants, properties, `on…` handlers and events, `send` throwing while connecting, a relative
 * or http(s) URL resolved and mapped to ws(s) as Chromium does.
 */
const STAND_IN = `(() => {
  const Native = globalThis.WebSocket;
  const ask = globalThis.${ASK};
  if (typeof Native !== 'function' || typeof ask !== 'function') return;
  const lock = (name, value) => { try { Object.defineProperty(globalThis, name, { value, writable: false, configurable: false }); } catch {} };
  for (const name of ${JSON.stringify(UNGATED)}) lock(name, undefined);
  // Every dedicated worker runs the prelude first: from a blob holding the prelude and then the script
  // (importScripts, or import() for a module worker). A page cannot reach the real constructor.
  const NativeWorker = globalThis.Worker;
  if (typeof NativeWorker === 'function') {
    const NativeBlob = Blob, toObjectUrl = URL.createObjectURL.bind(URL), quote = JSON.stringify, construct = Reflect.construct, WorkerUrl = URL, prelude = ${JSON.stringify(WORKER_PRELUDE)};
    const Worker = function Worker(url, options) {
      if (!new.target) throw new TypeError("Failed to construct 'Worker': Please use the 'new' operator, this DOM object constructor cannot be called as a function.");
      if (arguments.length === 0) throw new TypeError("Failed to construct 'Worker': 1 argument required, but only 0 present.");
      const href = new WorkerUrl(String(url), document.baseURI).href;
      const module = options != null && options.type === 'module';
      const source = 'self.__fetchplaneWorkerBase = ' + quote(href) + ';\\n' + prelude + '\\n' + (module ? 'await import(' + quote(href) + ');' : 'importScripts(' + quote(href) + ');');
      return construct(NativeWorker, [toObjectUrl(new NativeBlob([source], { type: 'text/javascript' })), options], new.target);
    };
    Worker.prototype = NativeWorker.prototype;
    Object.defineProperty(NativeWorker.prototype, 'constructor', { value: Worker, writable: true, configurable: true });
    lock('Worker', Worker);
  }
  try { delete globalThis.${ASK}; } catch {}
  const NativeURL = URL, NativeEvent = Event, NativeMessageEvent = MessageEvent, NativeCloseEvent = CloseEvent;
  const Exception = DOMException, random = crypto.getRandomValues.bind(crypto), later = setTimeout;
  const waiting = Object.create(null);
  Object.defineProperty(globalThis, '${ANSWER}', {
    value: (token, allowed) => { const settle = waiting[token]; delete waiting[token]; if (settle) settle(allowed === true); },
  });
  const newToken = () => Array.from(random(new Uint8Array(16)), (byte) => (byte < 16 ? '0' : '') + byte.toString(16)).join('');
  const EVENTS = ['open', 'message', 'error', 'close'];
  class WebSocket extends EventTarget {
    #native = null; #url; #protocols; #state = 0; #binaryType = 'blob';
    #handlers = { open: null, message: null, error: null, close: null };
    constructor(url, protocols) {
      super();
      if (arguments.length === 0) throw new TypeError("Failed to construct 'WebSocket': 1 argument required, but only 0 present.");
      let parsed;
      try { parsed = new NativeURL(String(url), document.baseURI); } catch { throw new Exception("Failed to construct 'WebSocket': The URL '" + url + "' is invalid.", 'SyntaxError'); }
      if (parsed.protocol === 'http:') parsed.protocol = 'ws:';
      else if (parsed.protocol === 'https:') parsed.protocol = 'wss:';
      if (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:') throw new Exception("Failed to construct 'WebSocket': The URL's scheme must be either 'http', 'https', 'ws', or 'wss'.", 'SyntaxError');
      if (parsed.hash) throw new Exception("Failed to construct 'WebSocket': The URL contains a fragment identifier ('" + parsed.hash + "'). Fragment identifiers are not allowed in WebSocket URLs.", 'SyntaxError');
      this.#url = parsed.href;
      this.#protocols = protocols;
      for (const type of EVENTS) super.addEventListener(type, (event) => { const handler = this.#handlers[type]; if (typeof handler === 'function') handler.call(this, event); });
      const token = newToken();
      waiting[token] = (allowed) => this.#answered(allowed);
      ask(token + ' ' + this.#url);
    }
    #answered(allowed) {
      if (this.#state !== 0) return;
      if (!allowed) return this.#fail();
      let native;
      try { native = this.#protocols === undefined ? new Native(this.#url) : new Native(this.#url, this.#protocols); } catch { return this.#fail(); }
      native.binaryType = this.#binaryType;
      this.#native = native;
      native.addEventListener('open', () => this.dispatchEvent(new NativeEvent('open')));
      native.addEventListener('message', (event) => this.dispatchEvent(new NativeMessageEvent('message', { data: event.data, origin: event.origin, lastEventId: event.lastEventId })));
      native.addEventListener('error', () => this.dispatchEvent(new NativeEvent('error')));
      native.addEventListener('close', (event) => this.dispatchEvent(new NativeCloseEvent('close', { code: event.code, reason: event.reason, wasClean: event.wasClean })));
    }
    #fail() {
      this.#state = 3;
      later(() => {
        this.dispatchEvent(new NativeEvent('error'));
        this.dispatchEvent(new NativeCloseEvent('close', { code: 1006, reason: '', wasClean: false }));
      }, 0);
    }
    get url() { return this.#url; }
    get readyState() { return this.#native ? this.#native.readyState : this.#state; }
    get bufferedAmount() { return this.#native ? this.#native.bufferedAmount : 0; }
    get protocol() { return this.#native ? this.#native.protocol : ''; }
    get extensions() { return this.#native ? this.#native.extensions : ''; }
    get binaryType() { return this.#binaryType; }
    set binaryType(value) { if (value !== 'blob' && value !== 'arraybuffer') return; this.#binaryType = value; if (this.#native) this.#native.binaryType = value; }
    get onopen() { return this.#handlers.open; }
    set onopen(value) { this.#handlers.open = typeof value === 'function' ? value : null; }
    get onmessage() { return this.#handlers.message; }
    set onmessage(value) { this.#handlers.message = typeof value === 'function' ? value : null; }
    get onerror() { return this.#handlers.error; }
    set onerror(value) { this.#handlers.error = typeof value === 'function' ? value : null; }
    get onclose() { return this.#handlers.close; }
    set onclose(value) { this.#handlers.close = typeof value === 'function' ? value : null; }
    send(data) {
      if (this.#native) return this.#native.send(data);
      if (this.#state === 0) throw new Exception("Failed to execute 'send' on 'WebSocket': Still in CONNECTING state.", 'InvalidStateError');
    }
    close(code, reason) {
      if (code !== undefined && code !== 1000 && !(code >= 3000 && code <= 4999)) throw new Exception("Failed to execute 'close' on 'WebSocket': The close code must be either 1000, or between 3000 and 4999. " + code + ' is neither.', 'InvalidAccessError');
      if (this.#native) return code === undefined ? this.#native.close() : this.#native.close(code, reason);
      if (this.#state === 0) this.#fail();
    }
  }
  ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED'].forEach((name, value) => {
    Object.defineProperty(WebSocket, name, { value, enumerable: true });
    Object.defineProperty(WebSocket.prototype, name, { value, enumerable: true });
  });
  Object.defineProperty(WebSocket.prototype, Symbol.toStringTag, { value: 'WebSocket', configurable: true });
  Object.defineProperty(globalThis, 'WebSocket', { value: WebSocket, writable: true, configurable: true, enumerable: false });
})();`;
