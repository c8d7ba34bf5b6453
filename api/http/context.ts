import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ParameterizedContext } from 'koa';
import type { Logger } from '../../base/log';

export interface RequestState {
  requestId: string;
  log: Logger;
}

export type AppContext = ParameterizedContext<RequestState>;

/** Query parameters as parsed: a repeated name gives an array. */
export type ParsedQuery = Record<string, string | string[] | undefined>;

/**
 * What the hot routes read and write of a request: a Koa context has all of it, and so has the lean
 * context (lean.ts) that serves the Fetch routes without Koa. Code on those routes takes this type.
 */
export interface HttpContext {
  readonly method: string;
  readonly path: string;
  readonly query: ParsedQuery;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  state: RequestState;
  status: number;
  body: unknown;
  /** A request header, '' when absent. */
  get(name: string): string;
  set(name: string, value: string): void;
  append(name: string, value: string): void;
}

export type HttpMiddleware = (ctx: HttpContext, next: () => Promise<void>) => Promise<void>;
