/**
 * OAuth 2.1 for agents that cannot hold a key: authorization-server metadata (RFC 8414), dynamic client
 * registration (RFC 7591, rate-limited per client network), the authorization endpoint with its
 * consent page (PKCE S256 only, exact redirect URIs; its form taken only from our own page), the token
 * endpoint, whose access token is an API key created for that client that expires after an hour, with
 * a refresh token that works once (core/oauth/tokens.ts), and revocation (RFC 7009).
 *
 * The routes parse and present; the commands (core/oauth/commands.ts) hold every read and write.
 * OAuth's own error shape answers here (`{error, error_description}`), not problem documents. Codes,
 * keys and verifiers travel only in bodies and the client's redirect; the access log records paths
 * without their query.
 */
import type { AppContext } from '../http/context';
import { redirectTo, SCOPE } from '../../core/oauth/commands';
import type { ApiDeps } from '../deps';
import type { ResponseSpec, Route } from '../http/routes';
import { consentPage, pageHeaders, signedUpPage } from './consent-page';
import { appBaseUrl, clientAddress } from '../accounts/agent-routes';
import { clientNetwork } from '../../core/accounts/signups';
import { validRedirectUri } from './redirect-uris';
import { crossSiteWrite } from '../http/cross-site';
import { checkCsrf, issueCsrf } from './csrf';
import { secondsText } from '../../base/errors';

const FORM = 'application/x-www-form-urlencoded';

/** OAuth's own error shape (RFC 6749 §5.2, RFC 7591 §3.2.2), not a problem document. */
const OAUTH_ERROR: ResponseSpec = {
  description: 'OAuth error',
  content: { 'application/json': { schema: { type: 'object', required: ['error'], properties: { error: { type: 'string' }, error_description: { type: 'string' } } } } },
};

/** The authorization endpoint answers people: its errors are pages. */
const HTML_ERROR: ResponseSpec = { description: 'A page saying what is wrong', content: { 'text/html': {} } };

const REGISTRATION = {
  type: 'object',
  required: ['redirect_uris'],
  properties: {
    redirect_uris: { type: 'array', minItems: 1, maxItems: 10, items: { type: 'string', format: 'uri' } },
    client_name: { type: 'string' },
    token_endpoint_auth_method: { type: 'string', enum: ['none'] },
  },
};

function oauthError(ctx: AppContext, status: number, error: string, description: string, retryAfterSeconds?: number): void {
  ctx.status = status;
  if (retryAfterSeconds !== undefined) ctx.set('Retry-After', String(retryAfterSeconds));
  ctx.set('Cache-Control', 'no-store');
  ctx.body = { error, error_description: description };
}

const isType = (ctx: AppContext, type: string): boolean => (ctx.get('Content-Type').split(';')[0] ?? '').trim().toLowerCase() === type;

const formOf = (raw: Buffer | undefined): Record<string, string> => Object.fromEntries(new URLSearchParams(raw?.toString('utf8') ?? ''));

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

function htmlError(ctx: AppContext, message: string, status = 400): void {
  ctx.status = status;
  for (const [name, value] of Object.entries(pageHeaders())) ctx.set(name, value);
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Authorization refused</title></head><body><h1>Authorization refused</h1><p>${message}</p></body></html>`;
}

export function oauthRoutes(deps: ApiDeps): Route[] {
  const { oauth } = deps.services;
  const rates = deps.accounts.rates;
  const base = deps.config.publicUrl;
  const networkOf = (ctx: AppContext): string => clientNetwork(clientAddress(ctx, deps.config.trustProxy));
  const tags = ['OAuth'];
  const showConsent = (ctx: AppContext, request: { client: { _id: string; client_name?: string }; redirectUri: string; echoed: Record<string, string> }, error?: string) => {
    for (const [name, value] of Object.entries(pageHeaders(request.redirectUri))) ctx.set(name, value);
    ctx.status = error ? 401 : 200;
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = consentPage({
      clientName: request.client.client_name ?? request.client._id,
      redirectHost: new URL(request.redirectUri).host || request.redirectUri,
      request: { ...request.echoed, csrf: issueCsrf(ctx) },
      error,
      signup: deps.config.agentSignup,
    });
  };

  return [
    {
      method: 'GET',
      path: '/.well-known/oauth-authorization-server',
      operationId: 'getAuthorizationServerMetadata',
      summary: 'OAuth 2.1 authorization-server metadata (RFC 8414).',
      tags,
      responses: { 200: { description: 'The metadata', content: { 'application/json': {} } } },
      handler(ctx) {
        ctx.set('Cache-Control', 'public, max-age=3600');
        ctx.body = {
          issuer: base,
          authorization_endpoint: `${base}/oauth/authorize`,
          token_endpoint: `${base}/oauth/token`,
          registration_endpoint: `${base}/oauth/register`,
          revocation_endpoint: `${base}/oauth/revoke`,
          revocation_endpoint_auth_methods_supported: ['none'],
          scopes_supported: [SCOPE],
          response_types_supported: ['code'],
          grant_types_supported: ['authorization_code', 'refresh_token'],
          code_challenge_methods_supported: ['S256'],
          token_endpoint_auth_methods_supported: ['none'],
        };
      },
    },
    {
      method: 'POST',
      path: '/oauth/register',
      operationId: 'registerOAuthClient',
      summary: 'Dynamic client registration (RFC 7591): a public client with its exact redirect URIs.',
      tags,
      body: 'raw',
      rawContent: { 'application/json': { schema: REGISTRATION } },
      errorResponse: OAUTH_ERROR,
      responses: {
        201: { description: 'The registered client', content: { 'application/json': {} } },
        400: { description: 'Invalid client metadata' },
        429: { description: 'Too many registrations from this network: `rate_limited` (requests) or `quota_exceeded` (limit oauth_clients), with Retry-After' },
      },
      async handler(ctx, input) {
        const network = networkOf(ctx);
        const rate = await rates.take(`/oauth/register|net:${network}`, deps.config.routeRateLimit, deps.config.routeRateWindowMs);
        if (!rate.ok) return oauthError(ctx, 429, 'rate_limited', `Too many registration requests from this network; retry in ${secondsText(rate.retryAfterSeconds)}.`, rate.retryAfterSeconds);
        if (!isType(ctx, 'application/json')) return oauthError(ctx, 400, 'invalid_client_metadata', 'Send the client metadata as application/json.');
        let metadata: unknown;
        try {
          metadata = JSON.parse(input.rawBody?.toString('utf8') ?? '');
        } catch {
          return oauthError(ctx, 400, 'invalid_client_metadata', 'The body is not valid JSON.');
        }
        if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return oauthError(ctx, 400, 'invalid_client_metadata', 'The body must be a JSON object.');
        const given = metadata as Record<string, unknown>;
        const uris = given.redirect_uris;
        if (!Array.isArray(uris) || uris.length === 0 || uris.length > 10 || !uris.every((uri) => typeof uri === 'string' && validRedirectUri(uri))) {
          return oauthError(ctx, 400, 'invalid_redirect_uri', 'redirect_uris: 1 to 10 absolute URIs, https or http on a loopback address, without a fragment.');
        }
        // Present means stated: a null or any other value than "none" is refused, not read as the default.
        const method = 'token_endpoint_auth_method' in given ? given.token_endpoint_auth_method : 'none';
        if (given.client_name !== undefined && typeof given.client_name !== 'string') return oauthError(ctx, 400, 'invalid_client_metadata', 'client_name must be a string.');
        if (method !== 'none') return oauthError(ctx, 400, 'invalid_client_metadata', 'Only public clients: token_endpoint_auth_method must be "none".');
        const name = typeof given.client_name === 'string' ? given.client_name.slice(0, 100) : undefined;
        const quota = await rates.take(`oauth_clients|net:${network}`, deps.config.oauthClientsPerAddress, deps.config.oauthClientWindowMs);
        if (!quota.ok) {
          return oauthError(ctx, 429, 'quota_exceeded', `This network registered its ${deps.config.oauthClientsPerAddress} OAuth clients (limit oauth_clients); retry in ${secondsText(quota.retryAfterSeconds)}.`, quota.retryAfterSeconds);
        }
        const client = await oauth.register(uris as string[], name);
        ctx.status = 201;
        ctx.set('Cache-Control', 'no-store');
        ctx.body = {
          client_id: client._id,
          client_id_issued_at: Math.floor(client.created_at.getTime() / 1000),
          redirect_uris: client.redirect_uris,
          ...(client.client_name ? { client_name: client.client_name } : {}),
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
          scope: SCOPE,
        };
      },
    },
    {
      method: 'GET',
      path: '/oauth/authorize',
      operationId: 'authorize',
      summary: 'Authorization endpoint: the consent page (PKCE S256 only, exact redirect URI).',
      tags,
      errorResponse: HTML_ERROR,
      responses: { 200: { description: 'The consent page', content: { 'text/html': {} } }, 302: { description: 'Back to the client with an error' }, 400: { description: 'Unknown client or redirect URI' } },
      async handler(ctx) {
        const checked = await oauth.checkAuthorization(ctx.query);
        if (!checked.ok) return 'page' in checked ? htmlError(ctx, checked.page) : ctx.redirect(checked.redirect);
        showConsent(ctx, checked.request);
      },
    },
    {
      method: 'POST',
      path: '/oauth/authorize',
      operationId: 'approveAuthorization',
      summary: 'The consent form: sign in with an API key, approve or deny.',
      tags,
      body: 'raw',
      rawContent: { [FORM]: { schema: { type: 'object', properties: { api_key: { type: 'string' }, decision: { type: 'string', enum: ['approve', 'deny', 'signup'] } } } } },
      errorResponse: HTML_ERROR,
      responses: {
        200: { description: 'The consent page again, saying what was wrong', content: { 'text/html': {} } },
        302: { description: 'Back to the client with a code or an error' },
        400: { description: 'Unknown client or redirect URI' },
        401: { description: 'The API key was not valid' },
        403: { description: 'Posted from another site (Origin, Sec-Fetch-Site) or without the page’s CSRF token' },
      },
      async handler(ctx, input) {
        if (!isType(ctx, FORM)) return htmlError(ctx, 'The consent form must be posted as application/x-www-form-urlencoded.');
        // Only our own page may post it: another site's page could approve, or sign up, as the visitor.
        const crossSite = crossSiteWrite(ctx, [base, appBaseUrl(deps.config)]);
        if (crossSite) return htmlError(ctx, `The consent form was posted from another site (${escapeHtml(crossSite)}).`, 403);
        const form = formOf(input.rawBody);
        if (!checkCsrf(ctx, form.csrf)) return htmlError(ctx, 'The consent form expired or did not come from this page: open the authorization link again.', 403);
        const checked = await oauth.checkAuthorization(form);
        if (!checked.ok) return 'page' in checked ? htmlError(ctx, checked.page) : ctx.redirect(checked.redirect);
        const { request } = checked;
        if (form.decision !== 'approve' && form.decision !== 'signup') {
          return ctx.redirect(redirectTo(request.redirectUri, { error: 'access_denied', error_description: 'The account holder denied access.', state: request.state }));
        }
        ctx.set('Cache-Control', 'no-store');
        if (form.decision === 'signup') {
          // The same signup, limits included, as POST /api/agent/signup; its claim link is shown once here.
          if (!deps.config.agentSignup) return showConsent(ctx, request, 'Signing up is disabled on this service; ask its operator for an API key.');
          const outcome = await deps.accounts.signups.signUp(clientNetwork(clientAddress(ctx, deps.config.trustProxy)), { origin: 'oauth', client: request.client.client_name ?? request.client._id });
          if (!outcome.ok) return showConsent(ctx, request, `Too many accounts were created from this network; try again in ${secondsText(outcome.retryAfterSeconds)}.`);
          const { signup } = outcome;
          const code = await oauth.grant(request, signup.accountId);
          for (const [name, value] of Object.entries(pageHeaders(request.redirectUri))) ctx.set(name, value);
          ctx.type = 'text/html; charset=utf-8';
          ctx.body = signedUpPage({
            claimUrl: `${appBaseUrl(deps.config)}/claim/${signup.accountId}/${signup.claimToken}`,
            trialEndsAt: signup.trialEndsAt.toISOString().slice(0, 10),
            continueUrl: redirectTo(request.redirectUri, { code, state: request.state }),
            clientName: request.client.client_name ?? request.client._id,
          });
          return;
        }
        const code = await oauth.grantWithKey(request, form.api_key ?? '');
        if (!code) return showConsent(ctx, request, 'That API key is not valid. Use an active key of your account.');
        ctx.redirect(redirectTo(request.redirectUri, { code, state: request.state }));
      },
    },
    {
      method: 'POST',
      path: '/oauth/token',
      operationId: 'token',
      summary: 'Token endpoint: exchanges a code and its PKCE verifier for an API key made for the client.',
      tags,
      body: 'raw',
      rawContent: {
        [FORM]: {
          schema: {
            type: 'object',
            required: ['grant_type', 'client_id'],
            properties: {
              grant_type: { type: 'string', enum: ['authorization_code', 'refresh_token'] },
              code: { type: 'string' },
              redirect_uri: { type: 'string' },
              client_id: { type: 'string' },
              code_verifier: { type: 'string', pattern: '^[A-Za-z0-9._~-]{43,128}$' },
              refresh_token: { type: 'string' },
            },
          },
        },
      },
      errorResponse: OAUTH_ERROR,
      responses: { 200: { description: 'The access token (an API key)', content: { 'application/json': {} } }, 400: { description: 'OAuth error' } },
      async handler(ctx, input) {
        if (!isType(ctx, FORM)) return oauthError(ctx, 400, 'invalid_request', `The token request must be ${FORM}.`);
        const form = formOf(input.rawBody);
        if (form.grant_type === 'refresh_token') {
          if (!form.refresh_token || !form.client_id) return oauthError(ctx, 400, 'invalid_request', 'refresh_token and client_id are required.');
          // A refresh token works once: a second use is refused (and the pair it belonged to is gone).
          const refreshed = await oauth.refresh(form.refresh_token, form.client_id);
          if (!refreshed.ok) return oauthError(ctx, 400, refreshed.error, refreshed.description);
          ctx.set('Cache-Control', 'no-store');
          ctx.set('Pragma', 'no-cache');
          ctx.body = refreshed.answer;
          return;
        }
        if (form.grant_type !== 'authorization_code') return oauthError(ctx, 400, 'unsupported_grant_type', 'Only grant_type=authorization_code or refresh_token is supported.');
        const { code, redirect_uri: redirectUri, client_id: clientId, code_verifier: verifier } = form;
        if (!code || !clientId || !verifier) return oauthError(ctx, 400, 'invalid_request', 'code, client_id and code_verifier are required.');
        if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) return oauthError(ctx, 400, 'invalid_request', 'code_verifier must be 43 to 128 unreserved characters.');
        const exchanged = await oauth.exchange({ code, clientId, verifier, ...(redirectUri !== undefined ? { redirectUri } : {}) });
        if (!exchanged.ok) return oauthError(ctx, 400, exchanged.error, exchanged.description);
        ctx.set('Cache-Control', 'no-store');
        ctx.set('Pragma', 'no-cache');
        ctx.body = exchanged.answer;
      },
    },
    {
      method: 'POST',
      path: '/oauth/revoke',
      operationId: 'revokeToken',
      summary: 'Token revocation (RFC 7009): an access token or a refresh token issued to the client stops working at once, with every token of the same authorization.',
      tags,
      body: 'raw',
      rawContent: {
        [FORM]: {
          schema: {
            type: 'object',
            required: ['token', 'client_id'],
            properties: {
              token: { type: 'string' },
              client_id: { type: 'string', description: 'The client the token was issued to: a token is revoked only by its own client.' },
              token_type_hint: { type: 'string', description: '`access_token` or `refresh_token`; a hint only (RFC 7009): another value is ignored.' },
            },
          },
        },
      },
      errorResponse: OAUTH_ERROR,
      responses: {
        200: { description: 'Revoked, or unknown (RFC 7009 answers both alike)' },
        400: { description: 'OAuth error: `invalid_request` (no token or no client_id), `invalid_grant` (the token was issued to another client; nothing is revoked)' },
      },
      async handler(ctx, input) {
        if (!isType(ctx, FORM)) return oauthError(ctx, 400, 'invalid_request', `The revocation request must be ${FORM}.`);
        const form = formOf(input.rawBody);
        if (!form.token || !form.client_id) return oauthError(ctx, 400, 'invalid_request', 'token and client_id are required.');
        // RFC 7009 §2.1: a token issued to another client is refused; an unknown one is answered as revoked.
        if ((await oauth.revoke(form.token, form.client_id)) === 'foreign') return oauthError(ctx, 400, 'invalid_grant', 'The token was issued to another client; nothing was revoked.');
        ctx.set('Cache-Control', 'no-store');
        ctx.status = 200;
        ctx.body = '';
      },
    },
  ];
}
