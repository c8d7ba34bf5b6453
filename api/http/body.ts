import { problem } from '../../base/errors';
import type { HttpContext } from './context';

/**
 * Reads the raw request body, refusing more than `limit` bytes with 413 before or while reading.
 * Past the limit the rest of the body is neither read nor kept: the 413 goes out with
 * `Connection: close` and the connection ends once it is written (closeAfterAnswer), so the client
 * reads the answer instead of a reset.
 */
export function readRawBody(ctx: HttpContext, limit: number): Promise<Buffer> {
  const declared = Number(ctx.get('Content-Length') || 0);
  if (declared > limit) return Promise.reject(tooLarge(ctx, limit));
  const { req } = ctx;
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  // Listeners, not `for await`: leaving an async iterator early destroys the request and its socket.
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    // The error listener stays: a request that errors later with no listener would end the process.
    const done = (): void => {
      settled = true;
      req.off('data', onData).off('end', onEnd).off('aborted', onAborted);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      done();
      reject(tooLarge(ctx, limit));
    };
    const onEnd = (): void => {
      done();
      resolve(Buffer.concat(chunks));
    };
    // The client's fault (a malformed chunk, a body that stopped coming): answered as what it is, not as ours.
    const onError = (error: NodeJS.ErrnoException): void => {
      if (settled) return;
      done();
      reject(bodyError(error, req.socket));
    };
    const onAborted = (): void => onError(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
    req.on('data', onData).on('end', onEnd).on('error', onError).on('aborted', onAborted);
  });
}

/**
 * The request body as an async iterable of its chunks, read as the handler consumes them (the
 * request is paused while a chunk waits), for uploads parsed as they arrive. Leaving the loop early
 * (a cap passed) leaves the rest unread and ends the connection once the answer is written.
 */
export function requestChunks(ctx: HttpContext): AsyncIterable<Buffer> {
  const { req } = ctx;
  return {
    [Symbol.asyncIterator]() {
      const queue: Buffer[] = [];
      let ended = req.readableEnded;
      let failure: unknown;
      let wake: (() => void) | undefined;
      const onData = (chunk: Buffer): void => {
        queue.push(chunk);
        req.pause();
        wake?.();
      };
      const onEnd = (): void => {
        ended = true;
        wake?.();
      };
      const onError = (error: NodeJS.ErrnoException): void => {
        failure ??= bodyError(error, req.socket);
        wake?.();
      };
      const onAborted = (): void => onError(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
      // The error listener stays: a request that errors later with no listener would end the process.
      const stop = (): void => void req.off('data', onData).off('end', onEnd).off('aborted', onAborted);
      req.on('data', onData).on('end', onEnd).on('error', onError).on('aborted', onAborted);
      return {
        async next(): Promise<IteratorResult<Buffer>> {
          for (;;) {
            const chunk = queue.shift();
            if (chunk) {
              if (queue.length === 0 && !ended) req.resume();
              return { value: chunk, done: false };
            }
            if (failure) {
              stop();
              throw failure;
            }
            if (ended) {
              stop();
              return { value: undefined, done: true };
            }
            await new Promise<void>((resolve) => (wake = resolve));
            wake = undefined;
          }
        },
        return(): Promise<IteratorResult<Buffer>> {
          stop();
          if (!ended) closeAfterAnswer(ctx);
          return Promise.resolve({ value: undefined, done: true });
        },
      };
    },
  };
}

const timedOut = new WeakSet<object>();

/** Node cut this connection at the request time-out (client-errors.ts): its body ends as a 408, not a 400. */
export function markTimedOut(socket: object): void {
  timedOut.add(socket);
}

function bodyError(error: NodeJS.ErrnoException, socket: object) {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' || timedOut.has(socket)) return problem('request_timeout', 'The request body did not arrive in time.');
  return problem('invalid_request', 'The request body could not be read: the client sent it malformed or stopped sending it.');
}

function tooLarge(ctx: HttpContext, limit: number) {
  closeAfterAnswer(ctx);
  return problem('payload_too_large', `The request body exceeds ${limit} bytes.`, { headers: { Connection: 'close' } });
}

/** After the answer, how long the connection stays open for the client to read it... */
const LINGER_MS = 1_000;
/** ...and how much of what it still sends is read and dropped meanwhile. */
const LINGER_BYTES = 8 * 1024 * 1024;

/**
 * Ends the connection once the answer is written, the rest of the body unread. A client still sending
 * would get a reset before it read the answer if the connection closed at once, so for LINGER_MS after
 * the answer only the sending side ends, and what the client still sends is read and dropped, LINGER_BYTES
 * at most; past those the socket is no longer read (the client's writes wait on a full window, which does
 * not keep it from reading the answer), and it is destroyed when the time is up or the body has ended.
 * Node's server would otherwise destroy a `Connection: close` socket as soon as the answer is written.
 */
export function closeAfterAnswer(ctx: HttpContext): void {
  const { req, res } = ctx;
  const { socket } = req;
  req.pause();
  socket.destroySoon = () => void socket.end();
  res.once('finish', () => {
    let dropped = 0;
    const end = (): void => {
      clearTimeout(timer);
      req.removeListener('data', drop);
      socket.destroy();
    };
    const drop = (chunk: Buffer): void => {
      dropped += chunk.length;
      if (dropped > LINGER_BYTES) req.pause();
    };
    const timer = setTimeout(end, LINGER_MS);
    req.on('data', drop);
    req.once('end', end);
    req.resume();
  });
}

/** `application/json` or a `+json` type, whatever its parameters. */
export function isJsonType(header: string): boolean {
  const type = header.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || /^application\/[\w.-]+\+json$/.test(type);
}

export type JsonBody = { ok: true; value: unknown } | { ok: false; reason: string };

/**
 * Parses a JSON body; an empty body is an empty object, since clients send none for "no options".
 * A body that is not declared as JSON is 415: a browser lets any page send a "simple" text/plain POST
 * to another site without asking, never an application/json one.
 */
export async function readJsonBody(ctx: HttpContext, limit: number): Promise<JsonBody> {
  const raw = await readRawBody(ctx, limit);
  const text = raw.toString('utf8').trim();
  if (text === '') return { ok: true, value: {} };
  if (!isJsonType(ctx.get('Content-Type'))) {
    throw problem('unsupported_media_type', 'The request body must be sent as Content-Type: application/json.');
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, reason: 'The request body is not valid JSON.' };
  }
}
