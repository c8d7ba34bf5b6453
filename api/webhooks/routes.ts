/**
 * The organization's webhook tools on the Batch surface (`X-API-Key` only): HMAC signing keys with
 * rotation, and `POST /v1/webhook/test`, which sends one signed `webhook.test` event through the
 * delivery activity's own sender (core/webhooks/deliver.ts) and reports what the receiver answered.
 * Secrets appear once, in the answer that creates them.
 */
import { problem } from '../../base/errors';
import type { HmacKeys } from '../../core/webhooks/hmac-keys';
import { checkWebhookUrl } from '../../engine';
import { authenticate, principalOf, securityOf } from '../auth/authenticate';
import { checkRouteRate } from '../../core/accounts/rate-limits';
import { clientNetwork } from '../../core/accounts/signups';
import { clientAddress } from '../accounts/agent-routes';
import type { ApiDeps } from '../deps';
import { issuesAs, type IssueMapper, type ObjectSchema, type ResponseSpec, type Route } from '../http/routes';

/** Batch validation failures all read `invalid_argument`, naming the field. */
export const batchIssues: IssueMapper = issuesAs('invalid_argument');

const json = (description: string, schema: Record<string, unknown>): ResponseSpec => ({ description, content: { 'application/json': { schema } } });

const TIMESTAMP = { type: 'string', format: 'date-time' };
const KID = { type: 'string', pattern: '^[0-9A-HJKMNP-TV-Z]{26}$', description: 'ULID of the key.' };
const KEY_META = { type: 'object', properties: { kid: KID, created_at: TIMESTAMP }, required: ['kid', 'created_at'] };

const TEST_BODY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    url: { type: 'string', format: 'uri', maxLength: 2048, description: 'A public https URL (400 callback_url_must_be_https for http, callback_url_unresolvable when its host has no address).' },
    signature: { type: ['boolean', 'null'], description: 'Sign the test event with the active HMAC key (default false).' },
  },
};

const TEST_RESULT = {
  type: 'object',
  required: ['delivered', 'event_id', 'elapsed_ms'],
  properties: {
    delivered: { type: 'boolean', description: 'The receiver answered 2xx.' },
    event_id: { type: 'string' },
    status_code: { type: 'integer', description: 'Absent when no answer came (timeout, refused, transport error).' },
    elapsed_ms: { type: 'integer' },
    error: { type: 'string', description: '`http_4xx:<code>`, `http_5xx:<code>`, `timeout`, `tls`, `refused_target` or `transport_error:<detail>`.' },
  },
};

const errors = {
  401: { description: 'API key missing or invalid (unauthenticated)' },
  503: { description: 'Temporary failure (internal)' },
};

export function webhookRoutes(deps: ApiDeps): Route[] {
  const { guard } = deps.fetching;
  const sender = deps.services.webhookSender;
  const keysOf = (): HmacKeys => {
    if (!deps.services.hmacKeys) throw problem('internal', 'Signing keys are unavailable: the server has no SECRETS_KEY configured.');
    return deps.services.hmacKeys;
  };
  const rates = deps.accounts.rates;
  const common = { tags: ['Batch webhooks'], security: securityOf('batch'), before: [authenticate(deps, 'batch')], issues: batchIssues };

  return [
    {
      ...common,
      method: 'POST',
      path: '/v1/webhook/test',
      operationId: 'testWebhook',
      summary: 'Send a webhook.test event to a URL and report the answer.',
      description: 'Signed like real deliveries when `signature` is true; runs no job. Always 200 once the request is valid: the outcome is in the body.',
      body: TEST_BODY,
      responses: {
        200: json('What the receiver answered', TEST_RESULT),
        400: { description: 'invalid_argument, callback_url_must_be_https, callback_url_unresolvable or webhook_signing_requires_active_key' },
        429: { description: 'Too many tests from this network or account (rate_limited, Retry-After)' },
        ...errors,
      },
      async handler(ctx, input) {
        const { accountId } = principalOf(ctx);
        // Each test is an outbound POST on demand: limited per network and per account.
        const network = clientNetwork(clientAddress(ctx, deps.config.trustProxy));
        await checkRouteRate(rates, '/v1/webhook/test', { network, accountId }, deps.config.routeRateLimit, deps.config.routeRateWindowMs);
        const body = input.body as { url: string; signature?: boolean | null };
        const target = await checkWebhookUrl(guard, body.url);
        if (!target.ok) throw problem(target.code, target.detail);
        const sent = await sender.sendTest(accountId, target.url.href, body.signature === true);
        if (!sent.sent) {
          throw sent.refused === 'signing_unavailable'
            ? problem('internal', 'Signing keys are unavailable: the server has no SECRETS_KEY configured.')
            : problem('webhook_signing_requires_active_key', 'Signed webhooks need an active HMAC key: call POST /v1/hmac/keys/rotate first.');
        }
        ctx.body = { event_id: sent.eventId, ...sent.outcome };
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/v1/hmac/keys',
      operationId: 'listHmacKeys',
      summary: 'The active and the staged signing key, without secrets.',
      responses: {
        200: json('Key slots', { type: 'object', properties: { active: { oneOf: [KEY_META, { type: 'null' }] }, candidate: { oneOf: [KEY_META, { type: 'null' }] } } }),
        ...errors,
      },
      async handler(ctx) {
        ctx.body = await keysOf().list(principalOf(ctx).accountId);
      },
    },
    {
      ...common,
      method: 'POST',
      path: '/v1/hmac/keys/rotate',
      operationId: 'rotateHmacKey',
      summary: 'Create the active signing key, or stage a candidate during a rotation.',
      description: 'The answer is the only one that ever carries the secret (32 random bytes, base64). Until finalize, deliveries stay signed by the active key.',
      responses: {
        201: json('The new key and its secret', { type: 'object', required: ['kid', 'secret', 'created_at'], properties: { kid: KID, secret: { type: 'string' }, created_at: TIMESTAMP } }),
        409: { description: 'A candidate is already staged (candidate_pending)' },
        ...errors,
      },
      async handler(ctx) {
        const created = await keysOf().rotate(principalOf(ctx).accountId);
        ctx.status = 201;
        ctx.set('Cache-Control', 'no-store');
        ctx.body = created;
      },
    },
    {
      ...common,
      method: 'POST',
      path: '/v1/hmac/keys/rotate/finalize',
      operationId: 'finalizeHmacKey',
      summary: 'Make the staged candidate the active key; the old key stops signing.',
      responses: {
        200: json('The new active key', { type: 'object', required: ['active_kid', 'created_at'], properties: { active_kid: KID, created_at: TIMESTAMP } }),
        409: { description: 'No candidate is staged (no_candidate)' },
        ...errors,
      },
      async handler(ctx) {
        ctx.body = await keysOf().finalize(principalOf(ctx).accountId);
      },
    },
    {
      ...common,
      method: 'DELETE',
      path: '/v1/hmac/keys/rotate',
      operationId: 'cancelHmacRotation',
      summary: 'Drop the staged candidate; the active key keeps signing.',
      responses: { 204: { description: 'Rotation cancelled' }, 409: { description: 'No candidate is staged (no_candidate)' }, ...errors },
      async handler(ctx) {
        await keysOf().cancel(principalOf(ctx).accountId);
        ctx.status = 204;
      },
    },
  ];
}
