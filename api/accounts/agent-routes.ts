/**
 * The account surfaces of {app_url}: agent signup (`POST /api/agent/signup`, no authentication) and
 * the agent's account (`GET /api/agent/account`, `X-API-Key`). Their errors have the shape
 * `{error, message}` that agent clients read, not a problem document.
 */
import type { Middleware } from 'koa';
import type { Accounts } from '../../core/accounts';
import type { Services } from '../../core/services';
import { clientNetwork } from '../../core/accounts/signups';
import type { Config } from '../../base/config';
import { isApiError, secondsText } from '../../base/errors';
import type { AppContext, RequestState } from '../http/context';
import type { Route } from '../http/routes';
import { authenticate, principalOf, securityOf } from '../auth/authenticate';
import type { Database } from '../../base/db';
import { crossSiteWrite } from '../http/cross-site';
import { clientAddress } from '../http/client-address';

export type AgentDeps = {
  accounts: Accounts;
  db: Database;
  services: Pick<Services, 'claims'>;
  config: Pick<Config, 'agentSignup' | 'trustProxy' | 'appUrl' | 'appPort' | 'publicUrl' | 'routeRateLimit' | 'routeRateWindowMs'>;
};

/** Renders errors raised below (validation, authentication) as `{error, message}`. */
export const agentErrors: Middleware<RequestState> = async (ctx, next) => {
  try {
    await next();
  } catch (error) {
    if (!isApiError(error)) throw error;
    ctx.status = error.status;
    for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
    ctx.body = { error: error.code, message: error.detail };
  }
};

/** Base URL of the account surfaces, where claim links point. */
export function appBaseUrl(config: AgentDeps['config']): string {
  return config.appUrl ?? (config.appPort ? `http://localhost:${config.appPort}` : config.publicUrl);
}

// Where it lived first; its other users import it from here.
export { clientAddress };

/** Optional headers telling where an agent signup came from (all anonymous, all optional). */
export const PROVENANCE_HEADERS: Readonly<Record<string, string>> = {
  'x-agent-client': 'client',
  'x-agent-origin': 'origin',
  'x-agent-install-id': 'install_id',
  'user-agent': 'user_agent',
};

const clean = (value: string): string => value.replace(/[\p{Cc}]/gu, '').trim().slice(0, 200);

function provenanceOf(ctx: AppContext, body: Record<string, unknown>): Record<string, string> {
  const provenance: Record<string, string> = {};
  for (const [header, field] of Object.entries(PROVENANCE_HEADERS)) {
    const value = ctx.get(header);
    if (value) provenance[field] = clean(value);
  }
  for (const field of ['client', 'origin'] as const) {
    const value = body[field];
    if (typeof value === 'string' && value.trim() !== '') provenance[field] = clean(value);
  }
  return provenance;
}

const SIGNUP_BODY = {
  type: 'object' as const,
  additionalProperties: false,
  properties: {
    client: { type: 'string', maxLength: 200, description: 'Name of the agent or tool signing up.' },
    origin: { type: 'string', maxLength: 200, description: 'Where the signup comes from (for example an MCP server).' },
  },
};

const SIGNUP_RESULT = {
  type: 'object',
  required: ['apiKey', 'accountId', 'claimUrl', 'trialEndsAt'],
  properties: {
    apiKey: { type: 'string' },
    accountId: { type: 'string' },
    claimUrl: { type: 'string', format: 'uri' },
    trialEndsAt: { type: 'string', format: 'date-time' },
  },
};

export function agentRoutes(deps: AgentDeps): Route[] {
  const { accounts, config } = deps;
  const rates = deps.accounts.rates;
  const { claims } = deps.services;
  return [
    {
      method: 'POST',
      path: '/api/agent/signup',
      operationId: 'agentSignup',
      summary: 'Creates an account and a free-plan API key with no human present.',
      description: `Optional provenance headers: ${Object.keys(PROVENANCE_HEADERS).join(', ')}. Limited per client network.`,
      tags: ['Agent signup'],
      body: SIGNUP_BODY,
      before: [agentErrors],
      responses: {
        201: { description: 'The new account and its key', content: { 'application/json': { schema: SIGNUP_RESULT } } },
        403: { description: '`{error: "cross_site", message}`: a browser on another site sent it (Origin, Sec-Fetch-Site)' },
        429: { description: '`{error: "rate_limited", message}`: this network created too many accounts, or sent too many signups (Retry-After)' },
      },
      async handler(ctx, { body }) {
        ctx.set('Cache-Control', 'no-store');
        if (!config.agentSignup) {
          ctx.status = 404;
          ctx.body = { error: 'signup_disabled', message: 'Agent signup is disabled on this service; ask its operator for an API key.' };
          return;
        }
        const crossSite = crossSiteWrite(ctx, [config.publicUrl, appBaseUrl(config)]);
        if (crossSite) {
          ctx.status = 403;
          ctx.body = { error: 'cross_site', message: `Signups from another site's pages are refused (${crossSite}).` };
          return;
        }
        const network = clientNetwork(clientAddress(ctx, config.trustProxy));
        const rate = await rates.take(`signup|${network}`, config.routeRateLimit, config.routeRateWindowMs);
        if (!rate.ok) {
          ctx.status = 429;
          ctx.set('Retry-After', String(rate.retryAfterSeconds));
          ctx.body = { error: 'rate_limited', message: `Too many signup requests from this network; try again in ${secondsText(rate.retryAfterSeconds)}.` };
          return;
        }
        const outcome = await accounts.signups.signUp(network, provenanceOf(ctx, body as Record<string, unknown>));
        if (!outcome.ok) {
          ctx.status = 429;
          ctx.set('Retry-After', String(outcome.retryAfterSeconds));
          ctx.body = {
            error: 'rate_limited',
            message: `Too many accounts were created from this network; try again in ${secondsText(outcome.retryAfterSeconds)}.`,
          };
          return;
        }
        const { signup } = outcome;
        ctx.status = 201;
        ctx.body = {
          apiKey: signup.apiKey,
          accountId: signup.accountId,
          claimUrl: `${appBaseUrl(config)}/claim/${signup.accountId}/${signup.claimToken}`,
          trialEndsAt: signup.trialEndsAt.toISOString(),
        };
      },
    },
    {
      method: 'GET',
      path: '/api/agent/account',
      operationId: 'getAgentAccount',
      summary: 'The calling key’s account: whether a human claimed it, whether an agent created it.',
      tags: ['Agent signup'],
      security: securityOf('agent'),
      before: [agentErrors, authenticate(deps, 'agent')],
      responses: {
        200: {
          description: 'The account',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['accountId', 'claimed', 'isAgent'],
                properties: { accountId: { type: 'string' }, claimed: { type: 'boolean' }, isAgent: { type: 'boolean' } },
              },
            },
          },
        },
      },
      async handler(ctx) {
        const principal = principalOf(ctx);
        const claimed = await claims.isClaimed(principal.accountId);
        ctx.set('Cache-Control', 'no-store');
        ctx.body = { accountId: principal.accountId, claimed, isAgent: principal.isAgent };
      },
    },
  ];
}
