/**
 * The one authentication middleware. Each surface declares only its rule: where the key may be sent
 * and how failures read. A route adds `before: [authenticate(deps, 'crawl')]` and its handler reads
 * `principalOf(ctx)`.
 *
 * | surface           | key in                          | failures (401)                      |
 * |-------------------|---------------------------------|-------------------------------------|
 * | fetch             | `apikey` query                  | AUTH001 / AUTH002 / AUTH003         |
 * | extract           | `apikey` query or `X-API-Key`   | AUTH001 / AUTH002 / AUTH003         |
 * | prepared-domains  | `apikey` query or `X-API-Key`   | unauthenticated                     |
 * | crawl             | `X-API-Key` or `apikey` query   | AUTH001 / AUTH002 / AUTH003         |
 * | documents         | `X-API-Key` or `apikey` query   | AUTH001 / AUTH002 / AUTH003         |
 * | batch             | `X-API-Key` only; a key in the URL is refused | unauthenticated       |
 * | usage             | `X-API-Key`                     | AUTH001 / AUTH002 / AUTH003         |
 * | agent             | `X-API-Key`                     | unauthenticated                     |
 *
 * A key no cache knows is looked up in the database only while the client's network has not failed
 * too many look-ups lately (core/accounts/auth-failures.ts): past that, 429 `rate_limited` (limit
 * `auth_failures`) with `Retry-After`, so well-formed random keys cannot reach the database at will;
 * that 429 is held a moment and closes its connection (core/accounts/refusal-hold.ts), so they cannot
 * reach the API's HTTP handling at will either.
 * A known key's account then takes one request of its budget (core/accounts/request-budget.ts): past
 * it, 429 `rate_limited` with `Retry-After`, decided in memory before any database work and sent a
 * second later, so a client retrying at once cannot spin. A request of a database-backed surface then
 * takes one of its account's turns at the database (core/accounts/database-share.ts): past the
 * account's share and its line, 429 `rate_limited` (limit `database_share`).
 *
 * Keys never reach a log: the access log records the path without its query, and no detail echoes
 * what was sent.
 */
import type { Accounts, Principal } from '../../core/accounts';
import { isWellFormedKey } from '../../core/accounts/keys';
import { clientNetwork } from '../../core/accounts/signups';
import type { Config } from '../../base/config';
import { problem, secondsText, type ApiError } from '../../base/errors';
import { clientAddress } from '../http/client-address';
import type { HttpContext, HttpMiddleware, RequestState } from '../http/context';
import type { JsonSchema } from '../http/routes';

export type Surface = 'fetch' | 'extract' | 'prepared-domains' | 'crawl' | 'documents' | 'batch' | 'usage' | 'agent';

/** Surfaces whose requests are database reads and writes, held to the account's share of the pool. */
const DATABASE_SURFACES: ReadonlySet<Surface> = new Set(['prepared-domains', 'crawl', 'batch', 'usage']);

interface KeyRule {
  query: boolean;
  header: boolean;
  /** A key-like query parameter is an error, not merely ignored. */
  refuseInUrl?: boolean;
  failures: 'codes' | 'unauthenticated';
}

export const KEY_RULES: Readonly<Record<Surface, KeyRule>> = {
  fetch: { query: true, header: false, failures: 'codes' },
  extract: { query: true, header: true, failures: 'codes' },
  'prepared-domains': { query: true, header: true, failures: 'unauthenticated' },
  crawl: { query: true, header: true, failures: 'codes' },
  documents: { query: true, header: true, failures: 'codes' },
  batch: { query: false, header: true, refuseInUrl: true, failures: 'unauthenticated' },
  usage: { query: false, header: true, failures: 'codes' },
  agent: { query: false, header: true, failures: 'unauthenticated' },
};

/** Security scheme names of a surface, for `Route.security` (the OpenAPI document). */
export function securityOf(surface: Surface): string[] {
  const rule = KEY_RULES[surface];
  return [...(rule.query ? ['apiKeyQuery'] : []), ...(rule.header ? ['apiKeyHeader'] : [])];
}

/** The `apikey` query parameter, for the query schemas of surfaces that accept it there. */
export const API_KEY_QUERY_PROPERTY: JsonSchema = {
  type: 'string',
  description: 'Your API key (40 hexadecimal characters).',
};

const KEY_IN_URL = /^(x[-_]?)?api[-_]?key$/i;

type Failure = 'missing' | 'malformed' | 'not_found' | 'revoked' | 'account_deleted' | 'in_url';

function where(rule: KeyRule): string {
  if (rule.query && rule.header) return 'in the X-API-Key header or the apikey query parameter';
  return rule.query ? 'in the apikey query parameter' : 'in the X-API-Key header';
}

function failure(rule: KeyRule, reason: Failure): ApiError {
  const detail = {
    missing: `An API key is required: send it ${where(rule)}.`,
    malformed: 'The API key is malformed: an API key is 40 hexadecimal characters, sent once.',
    not_found: 'The API key is not valid: no such key.',
    revoked: 'The API key is not valid: it was revoked.',
    account_deleted: 'The API key is not valid: its account was deleted.',
    in_url: 'API keys are accepted only in the X-API-Key header, never in the URL; this request was refused. Consider the key exposed and replace it.',
  }[reason];
  if (rule.failures === 'unauthenticated') return problem('unauthenticated', detail);
  const code = reason === 'missing' ? 'AUTH001' : reason === 'malformed' ? 'AUTH002' : 'AUTH003';
  return problem(code, detail);
}

/** Where the request put its key, or why it cannot be used. */
function presentedKey(ctx: HttpContext, rule: KeyRule): { key: string } | { failure: Failure } {
  if (rule.refuseInUrl && Object.keys(ctx.query).some((name) => KEY_IN_URL.test(name))) return { failure: 'in_url' };
  const given: string[] = [];
  if (rule.header) {
    const header = ctx.req.headers['x-api-key'];
    if (Array.isArray(header)) return { failure: 'malformed' };
    if (header !== undefined && header !== '') given.push(header);
  }
  if (rule.query) {
    const query = ctx.query.apikey;
    if (Array.isArray(query)) return { failure: 'malformed' };
    if (query !== undefined && query !== '') given.push(query);
  }
  const [first] = given;
  if (first === undefined) return { failure: 'missing' };
  if (given.some((key) => key.toLowerCase() !== first.toLowerCase())) return { failure: 'malformed' };
  return isWellFormedKey(first) ? { key: first } : { failure: 'malformed' };
}

interface AuthState extends RequestState {
  principal?: Principal;
}

export function authenticate(deps: { accounts: Accounts; config: Pick<Config, 'trustProxy'> }, surface: Surface): HttpMiddleware {
  const rule = KEY_RULES[surface];
  return async (ctx, next) => {
    const presented = presentedKey(ctx, rule);
    if ('failure' in presented) throw failure(rule, presented.failure);
    let network: string | undefined;
    const networkOf = (): string => (network ??= clientNetwork(clientAddress(ctx, deps.config.trustProxy)));
    const check = await deps.accounts.keys.check(presented.key, { network: networkOf });
    if (!check.ok && check.reason === 'throttled') {
      // Held a moment first (refusal-hold.ts), before anything shared is taken: budget, slots, database.
      await deps.accounts.refusalHold.hold(networkOf());
      throw tooManyFailures(check.retryAfterSeconds);
    }
    if (!check.ok) throw failure(rule, check.reason);
    const admitted = deps.accounts.budget.take(check.principal.accountId, check.principal.plan.limits);
    if (!admitted.ok) {
      await deps.accounts.budget.hold(check.principal.accountId, admitted);
      throw overBudget(admitted);
    }
    (ctx.state as AuthState).principal = check.principal;
    try {
      if (!DATABASE_SURFACES.has(surface)) return await next();
      const turn = await deps.accounts.databaseShare.take(check.principal.accountId);
      if (!turn.ok) throw overShare();
      try {
        await next();
      } finally {
        turn.release();
      }
    } finally {
      admitted.done();
    }
  };
}

/**
 * The 429 of a client network that sent too many keys that are not valid (core/accounts/auth-failures.ts).
 * It ends its connection: a client guessing keys over keep-alive connections must open a new one for
 * each refusal, and those it cannot have held (core/accounts/refusal-hold.ts) cost it a handshake each.
 */
export function tooManyFailures(retryAfterSeconds: number): ApiError {
  return problem('rate_limited', `Too many requests from this network carried API keys that are not valid; retry in ${secondsText(retryAfterSeconds)}.`, {
    members: { limit: 'auth_failures' },
    headers: { 'Retry-After': String(retryAfterSeconds), Connection: 'close' },
  });
}

/** The 429 of an account past its request budget (core/accounts/request-budget.ts), before any database work. */
export function overBudget(refusal: { reason: 'rate' | 'in_flight'; retryAfterSeconds: number }): ApiError {
  const detail =
    refusal.reason === 'rate'
      ? `This account sends more requests per second than its plan allows (limit requests_per_second); retry in ${secondsText(refusal.retryAfterSeconds)}.`
      : `This account has as many requests in flight as its plan allows (limit requests_in_flight); retry when one is answered.`;
  return problem('rate_limited', detail, {
    members: { limit: refusal.reason === 'rate' ? 'requests_per_second' : 'requests_in_flight' },
    headers: { 'Retry-After': String(refusal.retryAfterSeconds) },
  });
}

/** The 429 of an account with as many database-backed requests running and waiting as its share allows. */
export function overShare(): ApiError {
  return problem('rate_limited', 'This account has as many requests using the database at once as its share allows, and as many waiting; retry when one is answered.', {
    members: { limit: 'database_share' },
    headers: { 'Retry-After': '1' },
  });
}

/** The principal `authenticate` established; a route without it is a programming error. */
export function principalOf(ctx: HttpContext): Principal {
  const principal = (ctx.state as AuthState).principal;
  if (!principal) throw new Error(`route ${ctx.method} ${ctx.path} reads a principal but does not authenticate`);
  return principal;
}

/** Sets the principal without a key (the benchmark's unauthenticated baseline, tests). */
export function assumePrincipal(principal: Principal): HttpMiddleware {
  return async (ctx, next) => {
    (ctx.state as AuthState).principal = principal;
    await next();
  };
}
