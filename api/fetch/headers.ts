/**
 * Headers across the Fetch proxy boundary: which of the caller's headers go to the target
 * (`custom_headers`), and how the target's headers come back (`Z-` prefixed, never as ours).
 */
import type { HttpContext } from '../http/context';

/**
 * The caller's headers that are about the call to this service, not about the target. Hop-by-hop and
 * framing headers are not listed: both engines drop those themselves.
 */
const OWN_HEADERS = new Set(['x-api-key', 'x-request-id', 'forwarded', 'via', 'x-real-ip']);

const isOwn = (name: string): boolean => OWN_HEADERS.has(name) || name.startsWith('x-forwarded-');

/**
 * What goes to the target: with `custom_headers`, every caller header but ours; without it, only the
 * body's Content-Type of a POST/PUT (a forwarded body is meaningless without it).
 */
export function forwardedHeaders(ctx: HttpContext, customHeaders: boolean, hasBody: boolean): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  const raw = ctx.req.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = (raw[index] ?? '').toLowerCase();
    const value = raw[index + 1] ?? '';
    if (isOwn(name)) continue;
    if (customHeaders || (hasBody && name === 'content-type')) pairs.push([name, value]);
  }
  return pairs;
}

const validValue = (value: string): boolean => !/[\r\n\0]/.test(value) && /^[\t\x20-\x7e\x80-\xff]*$/.test(value);

/** Echoes the target's headers with a `Z-` prefix (`Z-Set-Cookie`), repeated headers kept apart. */
export function echoTargetHeaders(ctx: Pick<HttpContext, 'append'>, headers: ReadonlyArray<readonly [string, string]>): void {
  for (const [name, value] of headers) {
    if (!validValue(value)) continue;
    ctx.append(echoedName(name), value);
  }
}

/** `content-type` → `Z-Content-Type`; the common names are remembered (a bounded cache). */
const echoedNames = new Map<string, string>();
function echoedName(name: string): string {
  let echoed = echoedNames.get(name);
  if (echoed === undefined) {
    echoed = `Z-${name.replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => dash + letter.toUpperCase())}`;
    if (echoedNames.size < 1_000) echoedNames.set(name, echoed);
  }
  return echoed;
}
