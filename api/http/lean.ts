/**
 * The hot routes without Koa. Routes marked `lean` whose path has no parameters (the Fetch surface) are
 * answered here, with the same middleware and handlers Koa runs for them: the app's problem middleware,
 * the route's `before`, validation. Only the context differs: Koa's (context, request and response
 * objects with delegated accessors, the router's match over every route, its response handling) was
 * about a fifth of the API's CPU per plain fetch in a profile. Anything else (HEAD, another spelling of
 * the path, every other route) goes to Koa.
 *
 * The lean context keeps Koa's rules where the routes rely on them: the status is 404 until a body is
 * set, setting a body without a status makes it 200, a body without a type gets one, and headers set
 * before an error stay on the problem document.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { problem } from '../../base/errors';
import { newRequestId } from '../../base/ids';
import type { Logger } from '../../base/log';
import type { HttpContext, HttpMiddleware, ParsedQuery, RequestState } from './context';
import { PROBLEM_CONTENT_TYPE, problemDocument } from './problem-middleware';
import type { LeanRoute } from './routes';

/** Like Koa's: a repeated name gives an array; names are own properties, never the prototype's. */
function parseQuery(search: string): ParsedQuery {
  const query: ParsedQuery = {};
  for (const [name, value] of new URLSearchParams(search)) {
    const previous = Object.hasOwn(query, name) ? query[name] : undefined;
    const next = previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value];
    // Assigning makes an own property of any other name (Object's members are writable data); `__proto__` would set the prototype.
    if (name === '__proto__') Object.defineProperty(query, name, { value: next, writable: true, enumerable: true, configurable: true });
    else query[name] = next;
  }
  return query;
}

class LeanContext implements HttpContext {
  state = {} as RequestState;
  private code = 404;
  private explicitStatus = false;
  private payload: string | Buffer | undefined;
  /** Lower-case name → the name as set and its values. */
  private readonly headers = new Map<string, { name: string; values: string[] }>();
  private parsedQuery: ParsedQuery | undefined;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly method: string,
    readonly path: string,
    private readonly search: string,
    /** Read by the problem middleware for the metrics' route label, as Koa's router sets it. */
    readonly _matchedRoute: string,
  ) {}

  get query(): ParsedQuery {
    return (this.parsedQuery ??= parseQuery(this.search));
  }

  get status(): number {
    return this.code;
  }

  set status(code: number) {
    this.code = code;
    this.explicitStatus = true;
  }

  get body(): unknown {
    return this.payload;
  }

  set body(value: unknown) {
    if (typeof value !== 'string' && !Buffer.isBuffer(value)) throw new TypeError('a lean route answers with a string or a Buffer');
    this.payload = value;
    if (!this.explicitStatus) this.code = 200;
    if (!this.headers.has('content-type')) {
      const type = typeof value !== 'string' ? 'application/octet-stream' : /^\s*</.test(value) ? 'text/html; charset=utf-8' : 'text/plain; charset=utf-8';
      this.set('Content-Type', type);
    }
  }

  get(name: string): string {
    const value = this.req.headers[name.toLowerCase()];
    return Array.isArray(value) ? value.join(', ') : (value ?? '');
  }

  set(name: string, value: string): void {
    this.headers.set(name.toLowerCase(), { name, values: [value] });
  }

  append(name: string, value: string): void {
    const existing = this.headers.get(name.toLowerCase());
    if (existing) existing.values.push(value);
    else this.set(name, value);
  }

  /** Writes the answer in one go; false when Node refused a header (the caller answers 500 instead). */
  respond(): boolean {
    const { res } = this;
    if (res.headersSent || res.destroyed) return true;
    const body = this.payload ?? '';
    const flat: string[] = [];
    for (const { name, values } of this.headers.values()) for (const value of values) flat.push(name, value);
    flat.push('Content-Length', String(Buffer.byteLength(body)));
    try {
      res.writeHead(this.code, flat);
    } catch {
      return false;
    }
    res.end(body);
    return true;
  }
}

async function run(chain: readonly HttpMiddleware[], ctx: HttpContext, index = 0): Promise<void> {
  const middleware = chain[index];
  if (middleware) await middleware(ctx, () => run(chain, ctx, index + 1));
}

export interface LeanOptions {
  routes: ReadonlyArray<{ route: LeanRoute; chain: HttpMiddleware[] }>;
  /** The app's own middleware (problem documents, request id, access log, metrics), run first. */
  first: HttpMiddleware;
  log: Logger;
  docsUrl: string;
}

/** A request listener for the lean routes: true when it took the request. */
export function leanDispatcher(options: LeanOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const chains = new Map<string, { chain: HttpMiddleware[]; path: string }>();
  for (const { route, chain } of options.routes) {
    if (!route.path.includes('{')) chains.set(`${route.method} ${route.path}`, { chain: [options.first, ...chain], path: route.path });
  }
  const internalError = (ctx: LeanContext): void => {
    const { res } = ctx;
    if (res.headersSent) return void res.destroy();
    const requestId = ctx.state.requestId ?? newRequestId();
    const error = problem('internal_error', `An unexpected error occurred; quote urn:service:request:${requestId} when reporting it.`);
    res.writeHead(error.status, { 'Content-Type': PROBLEM_CONTENT_TYPE, 'X-Request-Id': requestId });
    res.end(problemDocument(error, requestId, options.docsUrl));
  };
  return (req, res) => {
    const url = req.url ?? '';
    const mark = url.indexOf('?');
    const path = mark < 0 ? url : url.slice(0, mark);
    const found = chains.get(`${req.method ?? ''} ${path}`);
    if (!found) return false;
    const ctx = new LeanContext(req, res, req.method ?? 'GET', path, mark < 0 ? '' : url.slice(mark + 1), found.path);
    run(found.chain, ctx)
      .then(() => ctx.respond())
      .catch((error: unknown) => {
        // The problem middleware catches what the route throws: reaching here is a fault of ours.
        options.log.error('lean route failed', { error, path });
        return false;
      })
      .then((answered) => answered || internalError(ctx))
      .catch(() => res.destroy());
    return true;
  };
}
