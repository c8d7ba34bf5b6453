/**
 * The page's request gate, on the Chrome DevTools `Fetch` domain of the page's own session. Every
 * request the page makes pauses here first, redirect hops and iframe and worker requests included
 * (playwright's `route` lets redirect hops through unseen, hence this lower level), and is:
 *   1. refused if the target check refuses its URL (the fixture it pointed to never hears of it);
 *   2. refused if its resource type is blocked (`block_resources`);
 *   3. sent on, with the caller's headers when it goes to the target's own origin, and with the
 *      caller's method and body when it is the first top-level navigation.
 * WebSockets do not pass through `Fetch`; websocket-gate.ts puts them through the same check.
 *
 * The gate is installed on a fresh page (`installGate`, possibly ahead of the request, see pool.ts)
 * and takes the request's rules when the request starts (`start`); anything the page asked for before
 * that waits for them.
 */
import type { CDPSession, Page } from 'playwright-core';
import type { Protocol } from 'playwright-core/types/protocol';
import type { BlockableType, GuardVerdict, RefusedRequest, RequestGuard } from './types';
import { pendingProbe } from './pending-probe';
import { gateWebSockets, type WebSocketAsk } from './websocket-gate';

export interface InterceptOptions {
  guard: RequestGuard;
  blocked: ReadonlySet<BlockableType>;
  /** Headers added to every request for `origin` (the caller's forwarded headers). */
  originHeaders?: { origin: string; headers: ReadonlyArray<readonly [string, string]> };
  /** Method, body and extra headers of the first top-level navigation (a forwarded POST or PUT). */
  navigation?: { method: string; body?: Buffer; headers?: ReadonlyArray<readonly [string, string]> };
}

export interface Interception {
  refused: RefusedRequest[];
  blockedCount: number;
  /** The refusal that stopped a top-level navigation, if one did. */
  navigationRefusal(): RefusedRequest | undefined;
}

/** DevTools resource types as `block_resources` names; Document and Preflight are never blocked by type. */
const BLOCKABLE: Readonly<Record<string, BlockableType>> = {
  Stylesheet: 'stylesheet',
  Image: 'image',
  Media: 'media',
  Font: 'font',
  Script: 'script',
  TextTrack: 'texttrack',
  XHR: 'xhr',
  Fetch: 'fetch',
  EventSource: 'eventsource',
  WebSocket: 'websocket',
  Manifest: 'manifest',
  Prefetch: 'other',
  Ping: 'other',
  CSPViolationReport: 'other',
  SignedExchange: 'other',
  FedCM: 'other',
  Other: 'other',
};

/** URLs that never leave the browser. */
const LOCAL_SCHEMES = new Set(['data:', 'blob:', 'about:']);

export interface RequestGate {
  /** The page's own DevTools session. */
  session: CDPSession;
  /** Applies one request's rules; requests held until now go through them. */
  start(options: InterceptOptions): Promise<Interception>;
  /**
   * Ends the request's rules: until the next `start`, everything the page asks for is refused. Gives
   * the origins whose documents the page loaded since `start` (the only ones that can have stored
   * anything in the context).
   */
  stop(): string[];
}

/** Pauses every request of `page` (WebSockets included) until `start` gives the rules to apply. */
/** `settleHorizonMs`: timers due later than this after load never hold the page (the settle cap). */
export async function installGate(page: Page, settleHorizonMs = 3_000): Promise<RequestGate> {
  const session = await page.context().newCDPSession(page);
  let handle: ((event: Protocol.Fetch.requestPausedPayload) => Promise<void>) | undefined;
  let decideSocket: ((ask: WebSocketAsk) => Promise<void>) | undefined;
  const heldRequests: Protocol.Fetch.requestPausedPayload[] = [];
  const heldSockets: WebSocketAsk[] = [];
  const state: GateState = { mainFrameId: undefined, documentOrigins: new Set() };
  // A request left paused would hang the page: every path ends in continue or fail; sends to a page
  // that closed meanwhile are the only expected failures.
  const onPaused = (event: Protocol.Fetch.requestPausedPayload): void => {
    handle?.(event).catch(() => session.send('Fetch.failRequest', { requestId: event.requestId, errorReason: 'Failed' }).catch(() => undefined));
  };
  const onSocket = (ask: WebSocketAsk): void => {
    decideSocket?.(ask).catch(() => ask.answer(false));
  };
  session.on('Fetch.requestPaused', (event) => (handle ? onPaused(event) : heldRequests.push(event)));
  await session.send('Fetch.enable', { patterns: [{ urlPattern: '*', requestStage: 'Request' }] });
  await gateWebSockets(session, page, (ask) => (decideSocket ? onSocket(ask) : heldSockets.push(ask)));
  // What the settle rule after load asks (quiet.ts), in place before the page's own scripts.
  await page.addInitScript(pendingProbe(settleHorizonMs));

  return {
    session,
    async start(options) {
      const rules = await requestRules(session, options, state);
      handle = rules.request;
      decideSocket = rules.socket;
      for (const event of heldRequests.splice(0)) onPaused(event);
      for (const ask of heldSockets.splice(0)) onSocket(ask);
      return rules.interception;
    },
    stop() {
      handle = (event) => session.send('Fetch.failRequest', { requestId: event.requestId, errorReason: 'BlockedByClient' }).then(() => undefined);
      decideSocket = (ask) => ask.answer(false);
      const origins = [...state.documentOrigins];
      state.documentOrigins.clear();
      return origins;
    },
  };
}

interface GateState {
  /** The page is blank until its first request navigates it: the first document it asks for is the top-level one. */
  mainFrameId: string | undefined;
  documentOrigins: Set<string>;
}

async function requestRules(
  session: CDPSession,
  options: InterceptOptions,
  state: GateState,
): Promise<{ request(event: Protocol.Fetch.requestPausedPayload): Promise<void>; socket(ask: WebSocketAsk): Promise<void>; interception: Interception }> {
  const refused: RefusedRequest[] = [];
  let navigationRefusal: RefusedRequest | undefined;
  let blockedCount = 0;
  let navigationPending = options.navigation !== undefined;
  const kinds = options.blocked.has('xhr') !== options.blocked.has('fetch') ? await networkKinds(session) : undefined;
  const check = (url: URL | undefined): Promise<GuardVerdict> =>
    url ? options.guard(url).catch(() => ({ allowed: false as const, reason: 'the target check failed' })) : Promise.resolve({ allowed: false, reason: 'not a valid URL' });

  const request = async (event: Protocol.Fetch.requestPausedPayload): Promise<void> => {
    const { requestId, request, resourceType, frameId } = event;
    if (resourceType === 'Document') state.mainFrameId ??= frameId;
    const isNavigation = resourceType === 'Document' && frameId === state.mainFrameId;
    const url = safeUrl(request.url);
    if (!url || !LOCAL_SCHEMES.has(url.protocol)) {
      const verdict = await check(url);
      if (!verdict.allowed) {
        const entry = { url: request.url, resourceType: resourceType.toLowerCase(), reason: verdict.reason };
        refused.push(entry);
        if (isNavigation) navigationRefusal = entry;
        await session.send('Fetch.failRequest', { requestId, errorReason: 'BlockedByClient' });
        return;
      }
    }
    if (resourceType === 'Document' && url && !LOCAL_SCHEMES.has(url.protocol)) state.documentOrigins.add(url.origin);
    let type = BLOCKABLE[resourceType];
    if (type === 'xhr' && kinds && event.networkId) type = await kinds(event.networkId);
    if (type && options.blocked.has(type)) {
      blockedCount++;
      await session.send('Fetch.failRequest', { requestId, errorReason: 'BlockedByClient' });
      return;
    }
    const sameOrigin = options.originHeaders !== undefined && url?.origin === options.originHeaders.origin;
    const navigation = isNavigation && navigationPending ? options.navigation : undefined;
    if (isNavigation) navigationPending = false;
    if (!sameOrigin && !navigation) {
      await session.send('Fetch.continueRequest', { requestId });
      return;
    }
    const extra = [...(sameOrigin ? (options.originHeaders?.headers ?? []) : []), ...(navigation?.headers ?? [])];
    await session.send('Fetch.continueRequest', {
      requestId,
      headers: mergeHeaders(request.headers, extra),
      ...(navigation ? { method: navigation.method, ...(navigation.body ? { postData: navigation.body.toString('base64') } : {}) } : {}),
    });
  };

  const socket = async (ask: WebSocketAsk): Promise<void> => {
    const verdict = await check(safeUrl(ask.url));
    if (!verdict.allowed) {
      refused.push({ url: ask.url, resourceType: 'websocket', reason: verdict.reason });
      await ask.answer(false);
    } else if (options.blocked.has('websocket')) {
      blockedCount++;
      await ask.answer(false);
    } else {
      await ask.answer(true);
    }
  };

  return {
    request,
    socket,
    interception: {
      refused,
      get blockedCount() {
        return blockedCount;
      },
      navigationRefusal: () => navigationRefusal,
    },
  };
}

/**
 * `Fetch` reports `fetch()` calls and XHRs alike as "XHR"; the `Network` domain tells them apart. Only
 * switched on when `block_resources` names one of the two and not the other.
 */
async function networkKinds(session: CDPSession): Promise<(networkId: string) => Promise<BlockableType>> {
  const known = new Map<string, BlockableType>();
  const waiting = new Map<string, (type: BlockableType) => void>();
  session.on('Network.requestWillBeSent', (event) => {
    if (event.type !== 'XHR' && event.type !== 'Fetch') return;
    const type: BlockableType = event.type === 'Fetch' ? 'fetch' : 'xhr';
    const waiter = waiting.get(event.requestId);
    if (waiter) waiter(type);
    else known.set(event.requestId, type);
  });
  await session.send('Network.enable');
  return (networkId) => {
    const type = known.get(networkId);
    if (type) {
      known.delete(networkId);
      return Promise.resolve(type);
    }
    // The two domains' events may arrive in either order; give the other one a moment.
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        waiting.delete(networkId);
        resolve('xhr');
      }, 500);
      waiting.set(networkId, (found) => {
        clearTimeout(timer);
        waiting.delete(networkId);
        resolve(found);
      });
    });
  };
}

/** Headers the caller may not set on a browser request. */
const NOT_FORWARDED = new Set([
  'host',
  'connection',
  'keep-alive',
  'content-length',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'accept-encoding',
  'proxy-authorization',
  'proxy-connection',
]);

function mergeHeaders(original: Record<string, string>, extra: ReadonlyArray<readonly [string, string]>): Protocol.Fetch.HeaderEntry[] {
  const replaced = new Set(extra.map(([name]) => name.toLowerCase()));
  const merged = Object.entries(original)
    .filter(([name]) => !replaced.has(name.toLowerCase()))
    .map(([name, value]) => ({ name, value }));
  for (const [name, value] of extra) if (!NOT_FORWARDED.has(name.toLowerCase())) merged.push({ name, value });
  return merged;
}

function safeUrl(raw: string): URL | undefined {
  try {
    return new URL(raw);
  } catch {
    return undefined;
  }
}
