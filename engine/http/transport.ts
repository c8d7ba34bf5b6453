/**
 * One HTTP exchange (one hop) on an undici dispatcher: send, then either read the body under a byte cap
 * and decode it, or discard it (a redirect). Network failures are thrown as undici raised them; the
 * engine classifies them, because only it knows whether its deadline or its caller aborted.
 */
import { EventEmitter } from 'node:events';
import type { Dispatcher } from 'undici';
import type { BodyRefusal, BodyWatch } from '../types';
import { decodeBody } from './decode';
import { headerPairs, headerValue, type HeaderList } from './headers';

/**
 * The fetch's own abort (its deadline, or its caller's), which only undici listens to. undici takes an
 * EventEmitter with `aborted` and `reason` as a signal, and one costs a small fraction of an AbortSignal
 * (creating an AbortSignal and listening to it take microseconds on Node 20, on every fetch).
 */
export class HopAbort extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }
}

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
  signal: HopAbort;
}

export type BodyResult =
  /** `refused`: the watch refused the body and the download was cut; `body` is what came before. */
  | { ok: true; body: Buffer; refused?: BodyRefusal }
  | { ok: false; kind: 'too_large' | 'protocol_error'; detail: string };

export interface HopResponse {
  status: number;
  headers: HeaderList;
  /**
   * Reads the whole body, at most `maxBytes` as received and `maxBytes` once decoded. A `watch` sees
   * each chunk of a body sent without Content-Encoding; its refusal closes the connection at once.
   */
  read(maxBytes: number, watch?: BodyWatch): Promise<BodyResult>;
  /** Drops the body (a redirect's); small bodies are drained so the connection can be reused. */
  discard(): Promise<void>;
}

const tooLarge = (maxBytes: number): BodyResult => ({
  ok: false,
  kind: 'too_large',
  detail: `the response is larger than ${maxBytes} bytes`,
});

async function readCapped(body: Dispatcher.ResponseData['body'], maxBytes: number, watch?: BodyWatch): Promise<{ body: Buffer; refused?: BodyRefusal } | undefined> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) {
      body.destroy();
      return undefined;
    }
    chunks.push(chunk);
    const refused = watch?.push(chunk);
    if (refused) {
      // Nothing more is read: the connection closes with the rest of the body unsent.
      body.destroy();
      return { body: Buffer.concat(chunks, total), refused };
    }
  }
  return { body: Buffer.concat(chunks, total) };
}

export async function sendHop(hop: HopRequest): Promise<HopResponse> {
  // undici's flat name, value, name, value … list, built in one pass (Array.prototype.flat took a microsecond a hop).
  const headers: string[] = [];
  for (const [name, value] of hop.headers) headers.push(name, value);
  if (hop.origin !== hop.url.origin) headers.push('host', hop.url.host);
  const response = await hop.dispatcher.request({
    origin: hop.origin,
    path: `${hop.url.pathname}${hop.url.search}`,
    method: hop.method as Dispatcher.HttpMethod,
    headers,
    body: hop.body,
    signal: hop.signal,
    headersTimeout: hop.headersTimeoutMs,
    bodyTimeout: hop.bodyTimeoutMs,
  });
  const pairs = headerPairs(response.headers);
  return {
    status: response.statusCode,
    headers: pairs,
    async read(maxBytes, watch) {
      const declared = Number(headerValue(pairs, 'content-length'));
      if (Number.isFinite(declared) && declared > maxBytes) {
        response.body.destroy();
        return tooLarge(maxBytes);
      }
      const encoding = headerValue(pairs, 'content-encoding');
      // A compressed body is watched nowhere: the caller's full check runs on it once decoded.
      const identity = (encoding ?? '').trim() === '' || encoding?.trim().toLowerCase() === 'identity';
      const raw = await readCapped(response.body, maxBytes, identity ? watch : undefined);
      if (raw === undefined) return tooLarge(maxBytes);
      if (raw.refused) return { ok: true, body: raw.body, refused: raw.refused };
      const decoded = await decodeBody(raw.body, encoding, maxBytes);
      return decoded.ok ? { ok: true, body: decoded.body } : decoded;
    },
    async discard() {
      // dump() reads up to a small limit and then closes the connection instead of draining more.
      await response.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
    },
  };
}
