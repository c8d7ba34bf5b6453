/**
 * The headers of a deprecated route, from its declaration (`Route.deprecated`): `Deprecation` (RFC 9745,
 * the date it was deprecated as a structured-field date `@<unix seconds>`), `Sunset` (RFC 8594, an
 * HTTP date) when its end is decided, and `Link` to what explains the change. Set before the handler
 * runs, so error answers of the route carry them too.
 */
import type { HttpMiddleware } from './context';

export interface Deprecation {
  /** When the route was deprecated (ISO 8601 date-time). */
  since: string;
  /** When it stops answering (ISO 8601 date-time), if decided. */
  sunset?: string;
  /** Where to read about the change or its replacement. */
  link?: string;
}

export function deprecationHeaders(deprecation: Deprecation): Array<[string, string]> {
  const since = Date.parse(deprecation.since);
  if (Number.isNaN(since)) throw new Error(`deprecated.since is not a date: ${deprecation.since}`);
  const headers: Array<[string, string]> = [['Deprecation', `@${Math.floor(since / 1000)}`]];
  if (deprecation.sunset !== undefined) {
    const sunset = Date.parse(deprecation.sunset);
    if (Number.isNaN(sunset)) throw new Error(`deprecated.sunset is not a date: ${deprecation.sunset}`);
    headers.push(['Sunset', new Date(sunset).toUTCString()]);
  }
  if (deprecation.link !== undefined) headers.push(['Link', `<${deprecation.link}>; rel="deprecation"; type="text/html"`]);
  return headers;
}

export function announceDeprecation(deprecation: Deprecation): HttpMiddleware {
  const headers = deprecationHeaders(deprecation);
  return async (ctx, next) => {
    for (const [name, value] of headers) ctx.set(name, value);
    await next();
  };
}
