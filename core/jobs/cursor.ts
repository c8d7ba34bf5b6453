/**
 * One codec for every opaque cursor: `base64url(<tag>.<resource>.<part>...)`, the tag naming the kind
 * and its version (`r1`), the resource the cursor belongs to (a crawl, a run, a job, an account; left
 * out where a listing has none), then the position. A cursor of another resource is refused, not
 * silently read as a position in this one.
 */

export type DecodedCursor<P> = { ok: true; position: P } | { ok: false; reason: 'malformed' | 'other_resource' };

export interface CursorCodec<P> {
  encode(resource: string | null, position: P): string;
  decode(resource: string | null, cursor: string): DecodedCursor<P>;
}

export interface CursorShape<P> {
  /** The position as parts (no `.` in them). */
  write(position: P): string[];
  /** The position read back from its parts, or undefined when they are not one. */
  read(parts: string[]): P | undefined;
}

const encodeText = (text: string): string => Buffer.from(text, 'utf8').toString('base64url');

function decodeText(cursor: string): string | undefined {
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(cursor)) return undefined;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  return encodeText(text) === cursor ? text : undefined;
}

const RESOURCE = /^[A-Za-z0-9_-]{1,80}$/;

export function cursorCodec<P>(tag: string, shape: CursorShape<P>): CursorCodec<P> {
  return {
    encode: (resource, position) => encodeText([tag, ...(resource === null ? [] : [resource]), ...shape.write(position)].join('.')),
    decode(resource, cursor) {
      const parts = decodeText(cursor)?.split('.');
      if (!parts || parts.shift() !== tag) return { ok: false, reason: 'malformed' };
      if (resource !== null) {
        const owner = parts.shift();
        if (owner === undefined || !RESOURCE.test(owner)) return { ok: false, reason: 'malformed' };
        if (owner !== resource) return { ok: false, reason: 'other_resource' };
      }
      const position = shape.read(parts);
      return position === undefined ? { ok: false, reason: 'malformed' } : { ok: true, position };
    },
  };
}

/** A whole number of at most `digits` digits, without leading zeros. */
export const wholeNumber = (part: string | undefined, digits = 9): number | undefined =>
  part !== undefined && new RegExp(`^(0|[1-9]\\d{0,${digits - 1}})$`).test(part) ? Number(part) : undefined;
