/**
 * One HTTP exchange (one hop) on an undici dispatcher: send, then either read the body under a byte cap
 * and decode it, or discard it (a redirect). Network failures are thrown as undici raised them; the
 * engine classifies them, because only it knows whether its deadline or its caller aborted.
 */
import type { Dispatcher } from 'undici';
import { decodeBody } from './decode';
import { headerPairs, headerValue, type HeaderList } from './headers';

export interface HopRequest {
  url: URL;
  /** Where to connect: `url.origin`, or the checked address of an override name (sent through a proxy). */
  origin: string;
  method: string;
  headers: HeaderList;
  body?: Buffer;
  dispatcher: Dispatcher;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  signal: AbortSignal;
}

export type BodyResult =
  | { ok: true; body: Buffer }
  | { ok: false; kind: 'too_large' | 'protocol_error'; detail: string };

export interface HopResponse {
  status: number;
  headers: HeaderList;
  /** Reads the whole body, at most `maxBytes` as received and `maxBytes` once decoded. */
  read(maxBytes: number): Promise<BodyResult>;
  /** Drops the body (a redirect's); small bodies are drained so the connection can be reused. */
  discard(): Promise<void>;
}

const tooLarge = (maxBytes: number): BodyResult => ({
  ok: false,
  kind: 'too_large',
  detail: `the response is larger than ${maxBytes} bytes`,
});

async function readCapped(body: Dispatcher.ResponseData['body'], maxBytes: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) {
      body.destroy();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, total);
}

export async function sendHop(hop: HopRequest): Promise<HopResponse> {
  const headers = [...hop.headers];
  if (hop.origin !== hop.url.origin) headers.push(['host', hop.url.host]);
  const response = await hop.dispatcher.request({
    origin: hop.origin,
    path: `${hop.url.pathname}${hop.url.search}`,
    method: hop.method as Dispatcher.HttpMethod,
    headers: headers.flat(),
    body: hop.body,
    signal: hop.signal,
    headersTimeout: hop.headersTimeoutMs,
    bodyTimeout: hop.bodyTimeoutMs,
  });
  const pairs = headerPairs(response.headers);
  return {
    status: response.statusCode,
    headers: pairs,
    async read(maxBytes) {
      const declared = Number(headerValue(pairs, 'content-length'));
      if (Number.isFinite(declared) && declared > maxBytes) {
        response.body.destroy();
        return tooLarge(maxBytes);
      }
      const raw = await readCapped(response.body, maxBytes);
      if (raw === undefined) return tooLarge(maxBytes);
      const decoded = await decodeBody(raw, headerValue(pairs, 'content-encoding'), maxBytes);
      return decoded.ok ? { ok: true, body: decoded.body } : decoded;
    },
    async discard() {
      // dump() reads up to a small limit and then closes the connection instead of draining more.
      await response.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
    },
  };
}
