import { problem } from '../../core/errors';
import type { HttpContext } from './context';

/**
 * Reads the raw request body, refusing more than `limit` bytes with 413 before or while reading.
 */
export async function readRawBody(ctx: HttpContext, limit: number): Promise<Buffer> {
  const declared = Number(ctx.get('Content-Length') || 0);
  if (declared > limit) throw problem('payload_too_large', `The request body exceeds ${limit} bytes.`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      ctx.req.destroy();
      throw problem('payload_too_large', `The request body exceeds ${limit} bytes.`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

export type JsonBody = { ok: true; value: unknown } | { ok: false; reason: string };

/** Parses a JSON body; an empty body is an empty object, since clients send none for "no options". */
export async function readJsonBody(ctx: HttpContext, limit: number): Promise<JsonBody> {
  const raw = await readRawBody(ctx, limit);
  const text = raw.toString('utf8').trim();
  if (text === '') return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, reason: 'The request body is not valid JSON.' };
  }
}
