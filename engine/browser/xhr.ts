/**
 * Records the XHR and fetch() calls a page makes, in the order they started, for `json_response`:
 * url, method, status, request and response headers and the body, cut at a size limit. Text bodies are
 * kept as text, anything else as base64.
 */
import type { Page, Request } from 'playwright-core';
import type { XhrRecord } from './types';

export interface XhrLimits {
  /** Bytes kept per body. */
  bodyLimit: number;
  /** Calls kept per page; later ones are counted, not recorded. */
  maxEntries: number;
}

export interface XhrRecorder {
  /** Waits (at most `waitMs`) for calls still in flight, then returns the records. */
  finish(waitMs: number): Promise<XhrRecord[]>;
  /** Stops listening to the page (which may serve another request). */
  dispose(): void;
}

const TEXTUAL = /^(text\/|application\/(json|xml|javascript|x-www-form-urlencoded|[\w.+-]+\+(json|xml)))/i;

export function recordXhr(page: Page, limits: XhrLimits): XhrRecorder {
  const entries: Array<{ request: Request; record?: XhrRecord; done?: Promise<void> }> = [];
  const byRequest = new Map<Request, (typeof entries)[number]>();

  const onRequest = (request: Request): void => {
    const type = request.resourceType();
    if ((type !== 'xhr' && type !== 'fetch') || entries.length >= limits.maxEntries) return;
    const entry: (typeof entries)[number] = { request };
    entries.push(entry);
    byRequest.set(request, entry);
  };
  const settle = (request: Request, failed: boolean): void => {
    const entry = byRequest.get(request);
    if (!entry) return;
    byRequest.delete(request);
    entry.done = describe(request, failed, limits.bodyLimit).then((record) => {
      entry.record = record;
    });
  };
  const onFinished = (request: Request): void => settle(request, false);
  const onFailed = (request: Request): void => settle(request, true);
  page.on('request', onRequest);
  page.on('requestfinished', onFinished);
  page.on('requestfailed', onFailed);

  return {
    dispose() {
      page.off('request', onRequest);
      page.off('requestfinished', onFinished);
      page.off('requestfailed', onFailed);
    },
    async finish(waitMs) {
      const pending = entries.map((entry) => entry.done).filter((done): done is Promise<void> => done !== undefined);
      await Promise.race([Promise.all(pending), new Promise((resolve) => setTimeout(resolve, waitMs))]);
      return entries.map((entry) => entry.record ?? unfinished(entry.request));
    },
  };
}

async function describe(request: Request, failed: boolean, bodyLimit: number): Promise<XhrRecord> {
  const requestHeaders = await request.allHeaders().catch(() => request.headers());
  const response = failed ? null : await request.response().catch(() => null);
  if (!response) {
    return {
      url: request.url(),
      method: request.method(),
      status: 0,
      request_headers: requestHeaders,
      response_headers: {},
      body: '',
      error: request.failure()?.errorText ?? 'no response',
    };
  }
  const responseHeaders = await response.allHeaders().catch(() => response.headers());
  const body = await response.body().catch(() => Buffer.alloc(0));
  const kept = body.subarray(0, bodyLimit);
  const textual = TEXTUAL.test(responseHeaders['content-type'] ?? 'text/plain');
  return {
    url: request.url(),
    method: request.method(),
    status: response.status(),
    request_headers: requestHeaders,
    response_headers: responseHeaders,
    body: textual ? kept.toString('utf8') : kept.toString('base64'),
    ...(textual ? {} : { body_encoding: 'base64' as const }),
    ...(body.length > bodyLimit ? { body_truncated: true } : {}),
  };
}

/** A call still in flight when the page was taken. */
function unfinished(request: Request): XhrRecord {
  return {
    url: request.url(),
    method: request.method(),
    status: 0,
    request_headers: request.headers(),
    response_headers: {},
    body: '',
    error: 'still in flight when the page was taken',
  };
}
